#!/usr/bin/env python3
"""Writes walk.gpx and walk.nmea: one synthetic ~3 km drive around a sequence of city blocks, one fix a second.

Standard library only and deterministic (a fixed seed), so running it again gives byte-identical files:
    python3 make-track.py [output-dir]
The geometry is a rectilinear loop in local metres anchored at ORIGIN; it does not follow real streets.
"""
import math
import random
import sys
from datetime import datetime, timedelta, timezone

ORIGIN = (52.516275, 13.377704)  # latitude, longitude of the loop's south-west corner (Berlin Mitte)
START = datetime(2024, 5, 18, 9, 30, 0, tzinfo=timezone.utc)
# Corners of the loop in metres east and north of ORIGIN; the last corner closes the loop.
CORNERS = [(0, 0), (500, 0), (500, 300), (800, 300), (800, 700), (250, 700), (250, 400), (0, 400), (0, 0)]
CRUISE = 8.3          # m/s, 30 km/h between corners
CORNER_SPEED = 2.5    # m/s through a corner
ACCELERATION = 1.2    # m/s² to and from a corner
NOISE = 1.2           # m, standard deviation of the position noise
SEED = 3
EARTH_RADIUS = 6371008.8
KNOTS_PER_MPS = 1 / 0.514444


def path_point(distance):
    """The point `distance` metres along the loop, the leg's heading (degrees from north) and the metres
    to the nearest corner."""
    travelled = 0.0
    for (x0, y0), (x1, y1) in zip(CORNERS, CORNERS[1:]):
        leg = math.hypot(x1 - x0, y1 - y0)
        if distance <= travelled + leg:
            f = (distance - travelled) / leg
            heading = math.degrees(math.atan2(x1 - x0, y1 - y0)) % 360
            to_corner = min(distance - travelled, travelled + leg - distance)
            return x0 + f * (x1 - x0), y0 + f * (y1 - y0), heading, to_corner
        travelled += leg
    x, y = CORNERS[-1]
    return x, y, 0.0, 0.0


def loop_length():
    return sum(math.hypot(x1 - x0, y1 - y0) for (x0, y0), (x1, y1) in zip(CORNERS, CORNERS[1:]))


def to_degrees(east, north):
    lat = ORIGIN[0] + math.degrees(north / EARTH_RADIUS)
    lon = ORIGIN[1] + math.degrees(east / (EARTH_RADIUS * math.cos(math.radians(ORIGIN[0]))))
    return lat, lon


def fixes():
    rng = random.Random(SEED)
    total = loop_length()
    distance, speed, second = 0.0, 0.0, 0
    out = []
    while True:
        x, y, heading, to_corner = path_point(distance)
        east, north = x + rng.gauss(0, NOISE), y + rng.gauss(0, NOISE)
        lat, lon = to_degrees(east, north)
        out.append({
            "time": START + timedelta(seconds=second),
            "lat": lat, "lon": lon,
            "ele": 34.0 + 3.0 * math.sin(distance / 400.0) + rng.gauss(0, 0.3),
            "speed": speed, "course": heading,
            "hdop": round(0.8 + rng.random() * 0.5, 1), "vdop": round(1.1 + rng.random() * 0.6, 1),
            "sats": 8 + rng.randrange(4),
        })
        if distance >= total:
            return out
        # Slow for the nearest corner and for the end of the loop, otherwise speed up to the cruise speed.
        limit = min(CRUISE, math.sqrt(CORNER_SPEED ** 2 + 2 * ACCELERATION * to_corner))
        limit = min(limit, math.sqrt(2 * ACCELERATION * (total - distance)) + 0.5)
        speed = max(0.5, min(limit, speed + ACCELERATION))
        distance = min(total, distance + speed)
        second += 1


def nmea(body):
    checksum = 0
    for ch in body:
        checksum ^= ord(ch)
    return f"${body}*{checksum:02X}"


def nmea_angle(value, degree_digits, positive, negative):
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    return f"{degrees:0{degree_digits}d}{minutes:08.5f}", hemisphere


def write_nmea(path, points):
    with open(path, "w", newline="\n") as f:
        for p in points:
            hhmmss = p["time"].strftime("%H%M%S") + ".00"
            lat, ns = nmea_angle(p["lat"], 2, "N", "S")
            lon, ew = nmea_angle(p["lon"], 3, "E", "W")
            f.write(nmea(f"GPGGA,{hhmmss},{lat},{ns},{lon},{ew},1,{p['sats']:02d},{p['hdop']:.1f},"
                         f"{p['ele']:.1f},M,39.6,M,,") + "\n")
            pdop = math.hypot(p["hdop"], p["vdop"])
            used = ",".join(str(prn) for prn in range(1, p["sats"] + 1)) + "," * (12 - p["sats"])
            f.write(nmea(f"GPGSA,A,3,{used},{pdop:.1f},{p['hdop']:.1f},{p['vdop']:.1f}") + "\n")
            f.write(nmea(f"GPRMC,{hhmmss},A,{lat},{ns},{lon},{ew},{p['speed'] * KNOTS_PER_MPS:.2f},"
                         f"{p['course']:.1f},{p['time'].strftime('%d%m%y')},,,A") + "\n")


def write_gpx(path, points):
    with open(path, "w", newline="\n") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write('<gpx version="1.1" creator="Offstage Data/location/make-track.py" '
                'xmlns="http://www.topografix.com/GPX/1/1">\n')
        f.write('  <metadata><name>walk</name><desc>A synthetic ~3 km drive around city blocks, one fix a second'
                '</desc></metadata>\n')
        f.write("  <trk>\n    <name>walk</name>\n    <trkseg>\n")
        for p in points:
            f.write(f'      <trkpt lat="{p["lat"]:.7f}" lon="{p["lon"]:.7f}"><ele>{p["ele"]:.1f}</ele>'
                    f'<time>{p["time"].strftime("%Y-%m-%dT%H:%M:%SZ")}</time>'
                    f'<sat>{p["sats"]}</sat><hdop>{p["hdop"]:.1f}</hdop><vdop>{p["vdop"]:.1f}</vdop></trkpt>\n')
        f.write("    </trkseg>\n  </trk>\n</gpx>\n")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
    points = fixes()
    write_gpx(f"{out_dir}/walk.gpx", points)
    write_nmea(f"{out_dir}/walk.nmea", points)
    print(f"{len(points)} points, {loop_length():.0f} m, {len(points) - 1} s")


if __name__ == "__main__":
    main()
