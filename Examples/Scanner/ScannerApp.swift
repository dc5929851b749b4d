import Foundation
import Offstage

/// A shop's barcode scanner on a serial line (SPEC MODE-4): the app registers it as accessory `scanner`, opens a
/// session whenever it is connected, and prints each barcode (one line each) with the time. While the app is
/// suspended the system watches the session: a scan wakes the app, which reads it and keeps running with a short
/// background task until the burst of scans is over. Plugging the scanner in launches the app into the background
/// (launch reason `accessory`) when it is not running.
///
/// The port is `SCANNER_PATH`, from the manifest's `OffstageLinux` `Environment`: /tmp/offstage-scanner there, where
/// `ScannerDevice /tmp/offstage-scanner` makes a stand-in scanner (a pseudo-terminal behind a link). Without it the
/// app uses /dev/ttyACM0, where a USB scanner in serial mode appears.
@MainActor
final class ScannerDelegate: ApplicationDelegate, AccessoryManagerDelegate {
    let path = ProcessInfo.processInfo.environment["SCANNER_PATH"] ?? "/dev/ttyACM0"
    var session: AccessorySession?
    var received: [UInt8] = []
    var burst = BackgroundTaskIdentifier.invalid
    var lastScan = ContinuousClock.now

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("launched (\(options.reason.rawValue))")
        AccessoryManager.shared.delegate = self  // events that woke the app come once there is a delegate
        do {
            let scanner = try AccessoryManager.shared.register(name: "scanner", path: path)
            say("registered \(scanner)")
            if scanner.isConnected { open(scanner) }
        } catch {
            say("cannot register the scanner: \(error)")  // says why and the fix, e.g. the mode is not declared
        }
        return true
    }

    func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory) {
        say("scanner connected")
        open(accessory)
    }

    func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory) {
        say("scanner disconnected")
        session?.close()  // the system closed its copy of the session; this one has nothing more to read
        session = nil
    }

    func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory) {
        say("woken: the scanner sent data")
        read()
    }

    /// Opens the port and hands the session to the system, so that a scan wakes the suspended app.
    func open(_ scanner: Accessory) {
        guard session == nil else { return }
        do {
            let session = try AccessorySession(accessory: scanner)
            session.readabilityHandler = { [weak self] _ in self?.read() }  // while the app runs
            self.session = session
            say("session open: \(session)")
        } catch {
            say("cannot open the scanner: \(error)")
        }
    }

    /// Reads what came and prints each complete line (a scanner ends a barcode with CR, LF or both).
    func read() {
        guard let session else { return }
        do {
            let bytes = try session.read()
            if bytes.isEmpty { return }
            received += bytes
            keepRunningForBurst()
        } catch {
            say("scanner line: \(error.message)")  // it hung up; the disconnected event follows
        }
        while let end = received.firstIndex(where: { $0 == 10 || $0 == 13 }) {
            let line = String(decoding: received[..<end], as: UTF8.self)
            received.removeSubrange(...end)
            if !line.isEmpty { say("barcode \(line)") }
        }
    }

    /// Scans come in bursts: a background task keeps the app running until two seconds pass without one, instead of
    /// being suspended (and woken again) between scans.
    func keepRunningForBurst() {
        lastScan = .now
        guard burst == .invalid else { return }
        burst = Application.shared.beginBackgroundTask(withName: "scan burst") { [weak self] in self?.endBurst() }
        Task { @MainActor [weak self] in
            while let self, self.burst != .invalid, ContinuousClock.now - self.lastScan < .seconds(2) {
                try? await Task.sleep(for: .milliseconds(250))
            }
            self?.endBurst()
        }
    }

    func endBurst() {
        guard burst != .invalid else { return }
        Application.shared.endBackgroundTask(burst)
        burst = .invalid
        say("burst over")
    }

    let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()

    func say(_ line: String) { print(clock.string(from: Date()) + " " + line) }
}

@main
struct ScannerApp {
    @MainActor static func main() { Application.main(delegate: ScannerDelegate()) }
}
