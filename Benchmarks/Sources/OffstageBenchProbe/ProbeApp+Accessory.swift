import Foundation
import Offstage
import OffstageBenchKit

/// The probe's `--accessory PATH --report SOCKET` mode: it registers accessory `bench` at PATH (external-accessory),
/// opens an ``AccessorySession`` to it as soon as it is connected (at launch, or on the connected event), which hands
/// the session to the daemon (SPEC MODE-4), and from each data handler sends the moment the handler began
/// (CLOCK_MONOTONIC, ns, as decimal text) to the report socket, after reading what came.
@MainActor
final class AccessoryProbe: AccessoryManagerDelegate {
    static let name = "bench"
    let path: String
    let report: String
    var session: AccessorySession?
    var reportSocket: Int32 = -1

    init(path: String, report: String) {
        self.path = path
        self.report = report
    }

    /// Registers the accessory and opens its session if it is connected; says on standard output how that went.
    func start() {
        AccessoryManager.shared.delegate = self
        do {
            reportSocket = try UnixSocket.datagram()
            let accessory = try AccessoryManager.shared.register(name: Self.name, path: path, mode: .externalAccessory)
            print("probe: registered \(accessory)")
            if accessory.isConnected { open(accessory) }
        } catch {
            print("probe: accessory setup failed: \(error)")
        }
    }

    func accessoryManager(_ manager: AccessoryManager, didConnect accessory: Accessory) {
        open(accessory)
    }

    func accessoryManager(_ manager: AccessoryManager, didDisconnect accessory: Accessory) {
        print("probe: accessory disconnected")
        session?.close()
        session = nil
    }

    /// The handler: its first act is the timestamp; then it drains the session and reports.
    func accessoryManager(_ manager: AccessoryManager, didReceiveDataFrom accessory: Accessory) {
        let now = MonotonicClock.now()
        do {
            if let session { while try !session.read().isEmpty {} }
        } catch {
            print("probe: reading the session failed: \(error)")
        }
        do {
            try UnixSocket.send(reportSocket, datagram: Array(String(now).utf8), to: report)
        } catch {
            print("probe: cannot report to \(report): \(error)")
        }
    }

    /// Opens the session, which hands it off to the daemon.
    func open(_ accessory: Accessory) {
        guard session == nil else { return }
        do {
            session = try AccessorySession(accessory: accessory)
            print("probe: accessory session handed off: \(session!)")
        } catch {
            print("probe: cannot open the accessory: \(error)")
        }
    }
}
