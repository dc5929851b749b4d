#!/usr/bin/env python3
"""An HTTP/1.1 server that misbehaves on purpose, for the transfer engine's tests (SPEC TR-4): what nginx cannot be
made to do. Standard library only. Started and ended by pid by TransferFaultServer.swift.

Serves the files under --root, with a strong ETag, Last-Modified and single byte ranges (If-Range honoured), at:
  /drop/NAME?after=N   the first GET of NAME announces the whole file but sends only N body bytes, then closes the
                       connection; later GETs (with or without Range) are answered in full; with &bare=1, a 206
                       carries no ETag nor Last-Modified (RFC 9110 lets it leave them out)
  /stall/NAME?after=N  sends the head and N body bytes, then nothing more until the client goes away
  /busy?seconds=S      429 with Retry-After as an HTTP-date S seconds from now
  /upload/NAME         POST stores the body as NAME under --root, answers 201
  /echo/NAME           POST stores the body as NAME under --root, answers 200 with the same bytes as its body
Writes its port to --port-file once it listens, and one line per request to --log, before the body is sent (so a
client that has its response finds the line):
  METHOD PATH STATUS BODY_BYTES_SENT RANGE IF_RANGE
"""

import argparse
import email.utils
import hashlib
import os
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    dropped = set()
    lock = threading.Lock()

    def log_message(self, format, *args):
        pass

    def record(self, status, sent):
        line = "%s %s %d %d %s %s\n" % (
            self.command,
            urllib.parse.urlsplit(self.path).path,
            status,
            sent,
            self.headers.get("Range", "-"),
            self.headers.get("If-Range", "-"),
        )
        with Handler.lock:
            with open(self.server.log_path, "a") as log:
                log.write(line)

    def file_path(self, name):
        name = urllib.parse.unquote(name)
        if "/" in name or name in ("", ".", ".."):
            return None
        return os.path.join(self.server.root, name)

    def plain(self, status, text, headers=()):
        body = text.encode()
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.record(status, len(body))
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = url.path.split("/", 2)
        if url.path == "/busy":
            seconds = int(query.get("seconds", ["60"])[0])
            when = email.utils.formatdate(time.time() + seconds, usegmt=True)
            return self.plain(429, "slow down\n", [("Retry-After", when)])
        if len(parts) != 3 or parts[1] not in ("drop", "stall"):
            return self.plain(404, "not found\n")
        path = self.file_path(parts[2])
        if path is None or not os.path.isfile(path):
            return self.plain(404, "not found\n")
        after = int(query.get("after", ["0"])[0])
        with open(path, "rb") as handle:
            data = handle.read()
        stat = os.stat(path)
        etag = '"%s"' % hashlib.sha256(data).hexdigest()[:16]
        last_modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        start, status = 0, 200
        ranged = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        match = re.fullmatch(r"bytes=(\d+)-", ranged or "")
        if match and (if_range is None or if_range in (etag, last_modified)):
            start, status = int(match.group(1)), 206
            if start >= len(data):
                return self.plain(416, "", [("Content-Range", "bytes */%d" % len(data))])
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if status == 200 or "bare" not in query:
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", last_modified)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.end_headers()
        if parts[1] == "drop":
            with Handler.lock:
                first = parts[2] not in Handler.dropped
                Handler.dropped.add(parts[2])
            if first:
                self.record(status, after)
                self.wfile.write(data[start : start + after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.record(status, len(data) - start)
            return self.wfile.write(data[start:])
        # stall: the head and `after` bytes, then silence until the client closes the connection.
        self.record(status, after)
        self.wfile.write(data[start : start + after])
        self.wfile.flush()
        self.connection.settimeout(None)
        while self.connection.recv(65536):
            pass
        self.close_connection = True

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/", 2)
        if len(parts) != 3 or parts[1] not in ("upload", "echo"):
            return self.plain(404, "not found\n")
        path = self.file_path(parts[2])
        if path is None:
            return self.plain(400, "bad name\n")
        length = int(self.headers.get("Content-Length", "-1"))
        if length < 0:
            return self.plain(411, "length required\n")
        remaining = length
        with open(path + ".uploading", "wb") as handle:
            while remaining > 0:
                chunk = self.rfile.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                handle.write(chunk)
                remaining -= len(chunk)
        if remaining > 0:
            self.close_connection = True
            return
        os.rename(path + ".uploading", path)
        if parts[1] == "echo":
            with open(path, "rb") as handle:
                body = handle.read()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.record(200, len(body))
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                # A client that keeps only the beginning of the answer closes the connection.
                self.close_connection = True
            return
        self.plain(201, "stored %d bytes\n" % length, [("ETag", '"upload-%d"' % length)])


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    arguments = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.root = arguments.root
    server.log_path = arguments.log
    with open(arguments.port_file + ".tmp", "w") as handle:
        handle.write(str(server.server_address[1]))
    os.rename(arguments.port_file + ".tmp", arguments.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
