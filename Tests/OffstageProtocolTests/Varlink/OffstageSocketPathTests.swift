import OffstageProtocol
import Testing

@Suite("OffstageSocketPath")
struct OffstageSocketPathTests {
    private let environment = ["OFFSTAGE_SOCKET": "/env/s.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]

    @Test("--socket wins over everything")
    func explicit() {
        let path = OffstageSocketPath.resolve(
            explicit: "/cli/s.sock", environment: environment, stateDirectory: "/state")
        #expect(path == "/cli/s.sock")
    }

    @Test("then $OFFSTAGE_SOCKET")
    func environmentVariable() {
        #expect(
            OffstageSocketPath.resolve(explicit: nil, environment: environment, stateDirectory: "/s") == "/env/s.sock")
        #expect(
            OffstageSocketPath.resolve(explicit: "", environment: environment, stateDirectory: "/s") == "/env/s.sock")
    }

    @Test("then the XDG runtime directory, if absolute")
    func runtimeDirectory() {
        let path = OffstageSocketPath.resolve(
            explicit: nil,
            environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"],
            stateDirectory: "/state"
        )
        #expect(path == "/run/user/1000/offstage/offstaged.sock")
        let relative = OffstageSocketPath.resolve(
            explicit: nil,
            environment: ["XDG_RUNTIME_DIR": "run/user"],
            stateDirectory: "/state"
        )
        #expect(relative == "/state/offstaged.sock")
    }

    @Test("then the state directory, then a per-user folder in /tmp")
    func fallbacks() {
        #expect(
            OffstageSocketPath.resolve(explicit: nil, environment: [:], stateDirectory: "/var/lib/o")
                == "/var/lib/o/offstaged.sock")
        #expect(
            OffstageSocketPath.resolve(
                explicit: nil, environment: ["OFFSTAGE_SOCKET": ""], stateDirectory: nil, userID: 42)
                == "/tmp/offstage-42/offstaged.sock"
        )
    }

    @Test("the default state folder: $OFFSTAGE_STATE_DIR, $XDG_STATE_HOME/offstage, ~/.local/state/offstage, /tmp")
    func stateDirectory() {
        let all = ["OFFSTAGE_STATE_DIR": "/o", "XDG_STATE_HOME": "/x", "HOME": "/home/u"]
        #expect(OffstageSocketPath.defaultStateDirectory(environment: all) == "/o")
        #expect(
            OffstageSocketPath.defaultStateDirectory(environment: ["XDG_STATE_HOME": "/x/", "HOME": "/h"])
                == "/x/offstage")
        #expect(
            OffstageSocketPath.defaultStateDirectory(environment: ["XDG_STATE_HOME": "x", "HOME": "/h"])
                == "/h/.local/state/offstage")
        #expect(OffstageSocketPath.defaultStateDirectory(environment: [:], userID: 7) == "/tmp/offstage-7/state")
    }
}
