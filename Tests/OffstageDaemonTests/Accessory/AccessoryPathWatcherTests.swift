import COffstageSystem
import Foundation
import Glibc
import OffstageCore
import OffstageHost
import Testing

@testable import OffstageDaemon

/// SPEC MODE-4: the daemon sees an accessory connect and disconnect as its path (a device node, a udev link, a socket)
/// appearing and disappearing, told by the kernel (inotify), including in a folder that does not exist yet.
@Suite("Accessory path watcher (MODE-4)")
struct AccessoryPathWatcherTests {
    private struct Report: Hashable {
        var name: String
        var present: Bool
    }

    /// A watcher in a fresh folder, and what it reports.
    private func withWatcher(_ body: (AccessoryPathWatcher, String, Collected<Report>) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offstage-accessory-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reports = Collected<Report>()
        let watcher = try AccessoryPathWatcher { key, present in
            reports.append(Report(name: key.name, present: present))
        }
        defer { watcher.stop() }
        try body(watcher, folder, reports)
    }

    private func key(_ name: String) -> AccessoryPathWatcher.Key { .init(app: "com.example.scanner", name: name) }

    @Test("MODE-4: the state is reported when the watch starts, then each time the path appears or goes")
    func appearAndDisappear() throws {
        try withWatcher { watcher, folder, reports in
            let path = folder + "/ttyACM0"
            watcher.watch(key("scanner"), path: path)
            #expect(reports.waitFor(1) == [Report(name: "scanner", present: false)])
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(reports.waitFor(2).last == Report(name: "scanner", present: true))
            try FileManager.default.removeItem(atPath: path)
            #expect(reports.waitFor(3).last == Report(name: "scanner", present: false))
        }
    }

    @Test("MODE-4: a udev-style link in a folder made later (serial/by-id) is seen, and its removal too")
    func linkInFolderMadeLater() throws {
        try withWatcher { watcher, folder, reports in
            let byID = folder + "/serial/by-id"
            let link = byID + "/usb-Offstage_Scanner-if00"
            watcher.watch(key("scanner"), path: link)
            #expect(reports.waitFor(1) == [Report(name: "scanner", present: false)])
            // The device node first, then the folders and the link, as udev does.
            let node = folder + "/ttyACM0"
            #expect(FileManager.default.createFile(atPath: node, contents: nil))
            try FileManager.default.createDirectory(atPath: byID, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: node)
            #expect(reports.waitFor(2).last == Report(name: "scanner", present: true))
            try FileManager.default.removeItem(atPath: link)
            #expect(reports.waitFor(3).last == Report(name: "scanner", present: false))
        }
    }

    @Test("MODE-4: an event in the folder reports only the accessories whose state changed")
    func onlyChangesAreReported() throws {
        try withWatcher { watcher, folder, reports in
            #expect(FileManager.default.createFile(atPath: folder + "/a", contents: nil))
            watcher.watch(key("a"), path: folder + "/a")
            watcher.watch(key("b"), path: folder + "/b")
            #expect(Set(reports.waitFor(2)) == [Report(name: "a", present: true), Report(name: "b", present: false)])
            #expect(FileManager.default.createFile(atPath: folder + "/b", contents: nil))
            #expect(reports.waitFor(3).last == Report(name: "b", present: true))
            // An unrelated file in the same folder changes nothing that is watched.
            #expect(FileManager.default.createFile(atPath: folder + "/unrelated", contents: nil))
            #expect(FileManager.default.createFile(atPath: folder + "/b2", contents: nil))
            Thread.sleep(forTimeInterval: 0.2)
            #expect(reports.all.count == 3)
        }
    }

    @Test("MODE-4: after unwatch nothing more is reported, and a new path replaces the old one")
    func unwatchAndReplace() throws {
        try withWatcher { watcher, folder, reports in
            watcher.watch(key("scanner"), path: folder + "/one")
            #expect(reports.waitFor(1).count == 1)
            watcher.watch(key("scanner"), path: folder + "/two")
            #expect(reports.waitFor(2).count == 2)
            #expect(watcher.watchedPaths == [key("scanner"): folder + "/two"])
            #expect(FileManager.default.createFile(atPath: folder + "/one", contents: nil))
            #expect(FileManager.default.createFile(atPath: folder + "/two", contents: nil))
            #expect(reports.waitFor(3).last == Report(name: "scanner", present: true))
            watcher.unwatch(key("scanner"))
            try FileManager.default.removeItem(atPath: folder + "/two")
            Thread.sleep(forTimeInterval: 0.2)
            #expect(reports.all.count == 3, "nothing is reported after unwatch")
            #expect(watcher.watchedPaths.isEmpty)
        }
    }

    @Test("MODE-4: the watched folder of a path is its nearest existing ancestor")
    func nearestExistingFolder() throws {
        try withWatcher { _, folder, _ in
            #expect(AccessoryPathWatcher.watchableFolder(of: folder + "/a/b/c") == folder)
            #expect(AccessoryPathWatcher.watchableFolder(of: folder + "/c") == folder)
            #expect(AccessoryPathWatcher.watchableFolder(of: "/nonexistent-offstage/x") == "/")
        }
    }
}

/// SPEC MODE-4: an accessory session the daemon can watch is a character device, a FIFO or a connected socket; anything
/// else is refused with what it is.
@Suite("Accessory session check (MODE-4)")
struct AccessorySessionCheckTests {
    @Test("MODE-4: a pty (standing in for a serial accessory) is a character device")
    func ptyIsCharacterDevice() throws {
        var name = [CChar](repeating: 0, count: 64)
        let master = offstage_open_pty(&name, name.count)
        try #require(master >= 0)
        defer { close(master) }
        let slave = open(
            String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), O_RDWR | O_NOCTTY)
        try #require(slave >= 0)
        defer { close(slave) }
        #expect(try AccessorySessionCheck.check(slave) == "character-device")
    }

    @Test("MODE-4: a FIFO and a connected socket are accepted")
    func fifoAndSocket() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        #expect(try AccessorySessionCheck.check(ends[0]) == "fifo")
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { pair.forEach { close($0) } }
        #expect(try AccessorySessionCheck.check(pair[0]) == "socket")
    }

    @Test("MODE-4: a regular file or an unconnected socket is refused, naming what it is")
    func othersRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offstage-session-\(UUID().uuidString)"
        ).path
        let file = open(path, O_CREAT | O_RDWR, 0o600)
        try #require(file >= 0)
        defer {
            close(file)
            unlink(path)
        }
        #expect(throws: AccessorySessionError.self) { try AccessorySessionCheck.check(file) }
        do {
            _ = try AccessorySessionCheck.check(file)
        } catch {
            #expect(error.description.contains("a regular file"))
        }
        let unconnected = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(unconnected) }
        #expect(throws: AccessorySessionError.self) { try AccessorySessionCheck.check(unconnected) }
    }
}

/// SPEC MODE-4: the watcher the daemon uses for handed-off channels works on a serial line: data the accessory sends
/// is reported (and left for the app), and the accessory going away is a hang-up.
@Suite("Accessory session watching (MODE-4)")
struct AccessorySessionWatchingTests {
    @Test("MODE-4: data on a pty is reported readable and stays for the app; closing the device side is a hang-up")
    func ptyDataAndHangUp() throws {
        var name = [CChar](repeating: 0, count: 64)
        let master = offstage_open_pty(&name, name.count)
        try #require(master >= 0)
        var masterOpen = true
        defer { if masterOpen { close(master) } }
        let path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let slave = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        try #require(slave >= 0)
        defer { close(slave) }
        // Raw mode: the bytes arrive as sent, without waiting for a line or echoing back.
        var settings = termios()
        try #require(tcgetattr(slave, &settings) == 0)
        cfmakeraw(&settings)
        try #require(tcsetattr(slave, TCSANOW, &settings) == 0)
        let events = Collected<SocketEvent>()
        let watcher = try SocketWatcher { token, event in if token == 3 { events.append(event) } }
        defer { watcher.stop() }
        try watcher.watch(fd: fcntl(slave, F_DUPFD_CLOEXEC, 0), token: 3)
        let barcode = Array("4006381333931\n".utf8)
        #expect(write(master, barcode, barcode.count) == barcode.count)
        #expect(events.waitFor(1) == [.readable])
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(slave, &buffer, buffer.count)
        #expect(count == barcode.count && Array(buffer.prefix(max(count, 0))) == barcode, "the watcher never reads")
        try watcher.arm(3)
        close(master)
        masterOpen = false
        #expect(events.waitFor(2) == [.readable, .closed])
    }
}
