import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

/// `offstage location …`: the location source, its last fix and the apps that receive locations; switch the source
/// (SPEC MODE-3, CLI-1).
struct LocationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "location",
        abstract: "Show the location source and the apps receiving locations; replay a track, set a position, or use gpsd.",
        subcommands: [LocationShow.self, LocationReplay.self, LocationSet.self, LocationGpsd.self],
        defaultSubcommand: LocationShow.self)
}

struct LocationShow: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the location source, its status, the last fix and the apps receiving locations.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.location, NoParameters(), as: ModesControlInterface.LocationReply.self)
        try client.output(reply, text: Table.location(reply))
    }
}

struct LocationReplay: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a GPX or NMEA track file as the location source.",
        discussion: """
            The file is read by the daemon, so give a path it can read (relative paths are made absolute here). \
            Points are delivered as recorded, --speed times faster; with --loop the track starts over after its end. \
            A file that is not a usable track changes nothing: the error names the file, the line and the fix.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The track: a .gpx or .nmea file.", valueName: "FILE")) var file: String
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Replay this many times faster than recorded (default 1).", valueName: "N"))
    var speed: Double?
    @Flag(help: "Start over from the first point after the last.") var loop = false

    func validate() throws {
        if let speed, !(speed >= 0.01 && speed <= 100_000) {
            throw ValidationError("--speed \(speed) is not usable; give a factor from 0.01 to 100000 (1 is real time)")
        }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.replayTrack,
            ModesControlInterface.ReplayTrackParameters(
                path: URL(fileURLWithPath: file).standardizedFileURL.path, speed: speed, loop: loop ? true : nil),
            as: ModesControlInterface.LocationReply.self)
        try client.output(reply, text: Table.location(reply))
    }
}

struct LocationSet: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Use a fixed position as the location source (moving it if one is set).",
        discussion: "Give a negative latitude for south and a negative longitude for west (after --, or as -- -33.9 18.4).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Degrees north, −90 to 90.", valueName: "LAT")) var latitude: Double
    @Argument(help: ArgumentHelp("Degrees east, −180 to 180.", valueName: "LON")) var longitude: Double
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Metres of error (default 10).", valueName: "M")) var accuracy: Double?

    func validate() throws {
        if !(latitude.isFinite && (-90...90).contains(latitude)) {
            throw ValidationError("latitude \(latitude) is outside −90…90; give degrees north (south is negative)")
        }
        if !(longitude.isFinite && (-180...180).contains(longitude)) {
            throw ValidationError("longitude \(longitude) is outside −180…180; give degrees east (west is negative)")
        }
        if let accuracy, !(accuracy >= 0 && accuracy <= LocationFix.earthCircumference) {
            throw ValidationError("--accuracy \(accuracy) is not usable; give 0 to 40075017 metres")
        }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.setLocation,
            ModesControlInterface.SetLocationParameters(latitude: latitude, longitude: longitude, accuracy: accuracy),
            as: ModesControlInterface.LocationReply.self)
        try client.output(reply, text: Table.location(reply))
    }
}

struct LocationGpsd: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpsd",
        abstract: "Read positions from gpsd (it reconnects if gpsd goes away).")
    @OptionGroup var globals: GlobalOptions
    @Option(help: ArgumentHelp("gpsd's host (default 127.0.0.1).", valueName: "H")) var host: String?
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("gpsd's TCP port (default 2947).", valueName: "P")) var port: Int?

    func validate() throws {
        if let port, !(1...65_535).contains(port) { throw ValidationError("--port \(port) is not a TCP port; give 1 to 65535") }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.useGpsd, ModesControlInterface.UseGpsdParameters(host: host, port: port),
            as: ModesControlInterface.LocationReply.self)
        try client.output(reply, text: Table.location(reply))
    }
}
