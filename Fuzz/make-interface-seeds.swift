// Writes the committed seed corpora of the interface fuzz targets, Fuzz/Corpus/<target>/ (modes, modes-control,
// control-explain, transfers-control, push-control, notifications-control, hand-off): calls as the SDK and the CLI send
// them, in the form VarlinkCodec writes them, each against the cores of Tests/OffstageProtocolTests/Fuzz/
// InterfaceFuzzSupport.swift. Seeds named `refused-` are refused by the conversion or the core in every core,
// `bad-parameters-` as InvalidParameter; the others are accepted in at least one (InterfaceFuzzRegressionTests holds
// them to it). Run `swift Fuzz/make-interface-seeds.swift` from the repository root after changing an interface.
import Foundation

let corpus = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fuzz/Corpus")

/// Replaces the seeds of `target` with `seeds` (file name → a call of `interface`'s method with those parameters).
func write(_ target: String, _ interface: String, _ seeds: [(String, String, String)]) throws {
    let folder = corpus.appendingPathComponent(target)
    try? FileManager.default.removeItem(at: folder)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for (name, method, parameters) in seeds {
        let call = #"{"method":"\#(interface).\#(method)","parameters":\#(parameters)}"#
        try Data(call.utf8).write(to: folder.appendingPathComponent(name))
    }
    print("\(target): \(seeds.count) seeds")
}

// MARK: io.offstage.Modes, as com.example.fuzz (every mode declared; keep-alive, accessory `scanner`, playing audio and
// location updates already set; in front, in the background, and locked).

try write("modes", "io.offstage.Modes", [
    ("audio-session-playback", "SetAudioSession", #"{"session":{"category":"playback","mixWithOthers":false,"active":true}}"#),
    ("audio-session-ambient", "SetAudioSession", #"{"session":{"category":"ambient","mixWithOthers":true,"active":true,"notifyOthersOnDeactivation":null}}"#),
    ("audio-session-off", "SetAudioSession", #"{"session":{"category":"playAndRecord","mixWithOthers":false,"active":false,"notifyOthersOnDeactivation":true}}"#),
    ("audio-playing", "SetAudioPlaying", #"{"playing":false}"#),
    ("keep-alive", "SetKeepAliveTimeout", #"{"seconds":600}"#),
    ("keep-alive-day", "SetKeepAliveTimeout", #"{"seconds":86400.5}"#),
    ("keep-alive-clear", "SetKeepAliveTimeout", #"{"seconds":null}"#),
    ("location", "StartUpdatingLocation", #"{"desiredAccuracy":10,"distanceFilter":0,"allowsBackground":true}"#),
    ("location-foreground", "StartUpdatingLocation", #"{"desiredAccuracy":0,"distanceFilter":500.5,"allowsBackground":false}"#),
    ("location-stop", "StopUpdatingLocation", "{}"),
    ("significant", "StartMonitoringSignificantChanges", "{}"),
    ("significant-stop", "StopMonitoringSignificantChanges", "null"),
    ("register-accessory", "RegisterAccessory", #"{"name":"printer-2","path":"/dev/serial/by-id/usb-Acme_Printer-if00","mode":"bluetooth-central"}"#),
    ("register-accessory-socket", "RegisterAccessory", #"{"name":"scanner","path":"/run/scanner.sock","mode":"external-accessory"}"#),
    ("unregister-accessory", "UnregisterAccessory", #"{"name":"scanner"}"#),
    ("accessories", "Accessories", "{}"),
    ("refused-keep-alive-short", "SetKeepAliveTimeout", #"{"seconds":30}"#),
    ("refused-keep-alive-1e308", "SetKeepAliveTimeout", #"{"seconds":1e308}"#),
    ("refused-keep-alive-minus-1e308", "SetKeepAliveTimeout", #"{"seconds":-1e308}"#),
    ("refused-keep-alive-year-10000", "SetKeepAliveTimeout", #"{"seconds":253402300800}"#),
    ("refused-audio-category", "SetAudioSession", #"{"session":{"category":"loud","mixWithOthers":false,"active":true}}"#),
    ("refused-location-accuracy-1e308", "StartUpdatingLocation", #"{"desiredAccuracy":1e308,"distanceFilter":0,"allowsBackground":true}"#),
    ("location-every-fix", "StartUpdatingLocation", #"{"desiredAccuracy":-1,"distanceFilter":-1,"allowsBackground":false}"#),
    ("refused-location-filter-beyond-earth", "StartUpdatingLocation", #"{"desiredAccuracy":10,"distanceFilter":-4.1e7,"allowsBackground":false}"#),
    ("refused-accessory-name", "RegisterAccessory", #"{"name":"a/b","path":"/dev/ttyACM1","mode":"external-accessory"}"#),
    ("refused-accessory-relative-path", "RegisterAccessory", #"{"name":"printer","path":"dev/ttyACM1","mode":"external-accessory"}"#),
    ("refused-accessory-mode", "RegisterAccessory", #"{"name":"printer","path":"/dev/ttyACM1","mode":"voip"}"#),
    ("refused-accessory-undeclared", "RegisterAccessory", #"{"name":"printer","path":"/dev/ttyACM1","mode":"bluetooth-peripheral"}"#),
    ("bad-parameters-keep-alive-text", "SetKeepAliveTimeout", #"{"seconds":"600"}"#),
    ("bad-parameters-keep-alive-1e309", "SetKeepAliveTimeout", #"{"seconds":1e309}"#),
    ("bad-parameters-no-session", "SetAudioSession", "{}"),
    ("bad-parameters-location-no-filter", "StartUpdatingLocation", #"{"desiredAccuracy":10,"allowsBackground":true}"#),
])

// MARK: io.offstage.ModesControl, as the CLI sends it.

try write("modes-control", "io.offstage.ModesControl", [
    ("audio-sessions", "AudioSessions", "{}"),
    ("voip-apps", "VoIPApps", "{}"),
    ("location", "Location", "{}"),
    ("accessories", "Accessories", "{}"),
    ("audio-interruption-begin", "AudioInterruption", #"{"begin":true}"#),
    ("refused-interruption-end-none", "AudioInterruption", #"{"begin":false}"#),
    ("system-event", "SystemEvent", #"{"kind":"significant-time-change"}"#),
    ("system-event-battery", "SystemEvent", #"{"kind":"battery-level-change"}"#),
    ("voip-socket-data", "VoIPSocketEvent", #"{"app":"com.example.fuzz","closed":false}"#),
    ("set-location", "SetLocation", #"{"latitude":52.5200066,"longitude":13.404954,"accuracy":5}"#),
    ("set-location-edges", "SetLocation", #"{"latitude":-90,"longitude":180,"accuracy":0}"#),
    ("set-location-default-accuracy", "SetLocation", #"{"latitude":0,"longitude":0}"#),
    ("replay-track", "ReplayTrack", #"{"path":"/srv/tracks/commute.gpx","speed":10,"loop":true}"#),
    ("use-gpsd", "UseGpsd", #"{"host":"127.0.0.1","port":2947}"#),
    ("accessory-data", "AccessoryEvent", #"{"app":"com.example.fuzz","name":"scanner","event":"data"}"#),
    ("accessory-disconnected", "AccessoryEvent", #"{"app":"com.example.fuzz","name":"scanner","event":"disconnected"}"#),
    ("refused-latitude", "SetLocation", #"{"latitude":90.5,"longitude":0}"#),
    ("refused-longitude-1e308", "SetLocation", #"{"latitude":0,"longitude":-1e308}"#),
    ("refused-accuracy-1e308", "SetLocation", #"{"latitude":52.52,"longitude":13.4,"accuracy":1e308}"#),
    ("refused-accuracy-negative", "SetLocation", #"{"latitude":52.52,"longitude":13.4,"accuracy":-1}"#),
    ("refused-system-event", "SystemEvent", #"{"kind":"reboot"}"#),
    ("refused-voip-not-an-id", "VoIPSocketEvent", #"{"app":"../etc","closed":true}"#),
    ("refused-voip-no-socket", "VoIPSocketEvent", #"{"app":"com.example.other","closed":true}"#),
    ("refused-voip-not-installed", "VoIPSocketEvent", #"{"app":"com.example.nope","closed":true}"#),
    ("refused-accessory-unknown", "AccessoryEvent", #"{"app":"com.example.fuzz","name":"printer","event":"connected"}"#),
    ("refused-accessory-event", "AccessoryEvent", #"{"app":"com.example.fuzz","name":"scanner","event":"exploded"}"#),
    ("bad-parameters-no-longitude", "SetLocation", #"{"latitude":52.52}"#),
    ("bad-parameters-track-path", "ReplayTrack", #"{"path":7}"#),
    ("bad-parameters-gpsd-port", "UseGpsd", #"{"port":"gps"}"#),
    ("bad-parameters-interruption", "AudioInterruption", "{}"),
])

// MARK: io.offstage.Control's scheduling and explain methods, as the CLI sends them.

try write("control-explain", "io.offstage.Control", [
    ("get-device", "GetDevice", "{}"),
    ("set-device", "SetDevice", #"{"batteryLevel":40,"charging":false,"network":"metered"}"#),
    ("set-device-clear", "SetDevice", #"{"clear":["batteryLevel","network","thermalState"]}"#),
    ("set-device-pressure", "SetDevice", #"{"lowPowerMode":true,"memoryPressure":"warning","thermalState":"serious","idle":true}"#),
    ("tasks", "Tasks", "{}"),
    ("tasks-app", "Tasks", #"{"app":"com.example.fuzz"}"#),
    ("explain", "Explain", #"{"app":"com.example.fuzz"}"#),
    ("explain-identifier", "Explain", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.refresh"}"#),
    ("explain-history", "ExplainHistory", #"{"app":"com.example.fuzz","since":1799990000.5}"#),
    ("explain-history-day", "ExplainHistory", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.refresh"}"#),
    ("run-task", "RunTask", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.refresh"}"#),
    ("fetch", "Fetch", #"{"id":"com.example.fuzz"}"#),
    ("refused-history-since-1e300", "ExplainHistory", #"{"app":"com.example.fuzz","since":1e300}"#),
    ("refused-history-since-minus-1e300", "ExplainHistory", #"{"app":"com.example.fuzz","since":-1e300}"#),
    ("refused-history-future", "ExplainHistory", #"{"app":"com.example.fuzz","since":1900000000}"#),
    ("refused-history-not-listed", "ExplainHistory", #"{"app":"com.example.fuzz","identifier":"com.example.other.refresh"}"#),
    ("refused-explain-not-an-id", "Explain", #"{"app":"not an id"}"#),
    ("refused-explain-not-installed", "Explain", #"{"app":"com.example.nope"}"#),
    ("refused-battery-101", "SetDevice", #"{"batteryLevel":101}"#),
    ("refused-battery-negative", "SetDevice", #"{"batteryLevel":-9223372036854775808}"#),
    ("refused-run-unknown", "RunTask", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.nothing"}"#),
    ("refused-expire-not-running", "ExpireTask", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.refresh"}"#),
    ("refused-cancel-not-continued", "CancelTask", #"{"app":"com.example.fuzz","identifier":"com.example.fuzz.export.1"}"#),
    ("refused-fetch-undeclared", "Fetch", #"{"id":"com.example.other"}"#),
    ("bad-parameters-network", "SetDevice", #"{"network":"wifi"}"#),
    ("bad-parameters-clear", "SetDevice", #"{"clear":["volume"]}"#),
    ("bad-parameters-pressure", "SetDevice", #"{"memoryPressure":"high"}"#),
    ("bad-parameters-since-text", "ExplainHistory", #"{"app":"com.example.fuzz","since":"yesterday"}"#),
    ("bad-parameters-no-app", "Explain", "{}"),
    ("bad-parameters-run-no-identifier", "RunTask", #"{"app":"com.example.fuzz"}"#),
    ("usage", "Usage", "{}"),
    ("usage-app-since", "Usage", #"{"app":"com.example.fuzz","since":1799990000.5}"#),
    ("refused-usage-future", "Usage", #"{"since":1900000000}"#),
    ("refused-usage-not-installed", "Usage", #"{"app":"com.example.nope"}"#),
    ("bad-parameters-usage-since-text", "Usage", #"{"since":"last week"}"#),
    ("memory-warning", "MemoryWarning", "{}"),
    ("memory-warning-app", "MemoryWarning", #"{"app":"com.example.fuzz"}"#),
    ("refused-memory-warning-not-installed", "MemoryWarning", #"{"app":"com.example.nope"}"#),
    ("bad-parameters-memory-warning-app", "MemoryWarning", #"{"app":7}"#),
])

// MARK: io.offstage.TransfersControl, as the CLI sends it (the app's download is task 5, the other app's task 6).

try write("transfers-control", "io.offstage.TransfersControl", [
    ("list", "List", "{}"),
    ("list-app", "List", #"{"app":"com.example.fuzz"}"#),
    ("pause", "Change", #"{"id":5,"change":"pause"}"#),
    ("cancel-other", "Change", #"{"id":6,"change":"cancel"}"#),
    ("refused-list-not-installed", "List", #"{"app":"com.example.nope"}"#),
    ("refused-list-not-an-id", "List", #"{"app":"com example"}"#),
    ("refused-no-such-task", "Change", #"{"id":999,"change":"cancel"}"#),
    ("refused-largest-id", "Change", #"{"id":18446744073709551615,"change":"pause"}"#),
    ("refused-change-word", "Change", #"{"id":5,"change":"stop"}"#),
    ("refused-resume-running", "Change", #"{"id":5,"change":"resume"}"#),
    ("bad-parameters-negative-id", "Change", #"{"id":-1,"change":"cancel"}"#),
    ("bad-parameters-fraction-id", "Change", #"{"id":1.5,"change":"cancel"}"#),
    ("bad-parameters-no-change", "Change", #"{"id":5}"#),
])

// MARK: io.offstage.PushControl, as the CLI sends it.

let publicKey = "-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n-----END PUBLIC KEY-----\\n"
try write("push-control", "io.offstage.PushControl", [
    ("status", "Status", "{}"),
    ("status-app", "Status", #"{"app":"com.example.other","limit":0}"#),
    ("status-most", "Status", #"{"limit":10000}"#),
    ("add-key", "AddKey", #"{"id":"ABC123DEFG","teamId":"TEAM123456","publicKey":"\#(publicKey)","topics":["com.example.fuzz"]}"#),
    ("add-key-every-topic", "AddKey", #"{"id":"key_2.b-c","teamId":"T","publicKey":"\#(publicKey)"}"#),
    ("keys", "Keys", "{}"),
    ("remove-key", "RemoveKey", #"{"id":"ABC123DEFG"}"#),
    ("token", "Token", #"{"app":"com.example.fuzz"}"#),
    ("refused-key-id-empty", "AddKey", #"{"id":"","teamId":"TEAM123456","publicKey":"\#(publicKey)"}"#),
    ("refused-key-id-space", "AddKey", #"{"id":"ABC 123","teamId":"TEAM123456","publicKey":"\#(publicKey)"}"#),
    ("refused-team-id-long", "AddKey", #"{"id":"ABC123DEFG","teamId":"\#(String(repeating: "T", count: 65))","publicKey":"\#(publicKey)"}"#),
    ("refused-topics-empty", "AddKey", #"{"id":"ABC123DEFG","teamId":"TEAM123456","publicKey":"\#(publicKey)","topics":[]}"#),
    ("refused-topic-not-an-id", "AddKey", #"{"id":"ABC123DEFG","teamId":"TEAM123456","publicKey":"\#(publicKey)","topics":["*"]}"#),
    ("refused-status-not-installed", "Status", #"{"app":"com.example.nope"}"#),
    ("refused-token-not-an-id", "Token", #"{"app":"-"}"#),
    ("bad-parameters-limit-negative", "Status", #"{"limit":-1}"#),
    ("bad-parameters-limit-large", "Status", #"{"limit":10001}"#),
    ("bad-parameters-limit-text", "Status", #"{"limit":"all"}"#),
    ("bad-parameters-no-public-key", "AddKey", #"{"id":"ABC123DEFG","teamId":"TEAM123456"}"#),
])

// MARK: io.offstage.NotificationsControl, as the CLI sends it (the app has "tea" delivered and "later" pending).

try write("notifications-control", "io.offstage.NotificationsControl", [
    ("notifications", "Notifications", "{}"),
    ("notifications-app", "Notifications", #"{"app":"com.example.fuzz"}"#),
    ("tap", "Tap", #"{"app":"com.example.fuzz","identifier":"tea"}"#),
    ("tap-dismiss", "Tap", #"{"app":"com.example.fuzz","identifier":"tea","action":"dismiss"}"#),
    ("clear-every-app", "Clear", "{}"),
    ("clear-app", "Clear", #"{"app":"com.example.fuzz"}"#),
    ("clear-identifier", "Clear", #"{"app":"com.example.fuzz","identifiers":["tea"]}"#),
    ("refused-tap-pending", "Tap", #"{"app":"com.example.fuzz","identifier":"later"}"#),
    ("refused-tap-not-installed", "Tap", #"{"app":"com.example.nope","identifier":"tea"}"#),
    ("refused-tap-action", "Tap", #"{"app":"com.example.fuzz","identifier":"tea","action":"snooze"}"#),
    ("refused-clear-without-app", "Clear", #"{"identifiers":["tea"]}"#),
    ("refused-clear-unknown", "Clear", #"{"app":"com.example.fuzz","identifiers":["tea","coffee"]}"#),
    ("refused-list-not-an-id", "Notifications", #"{"app":"com.example.fuzz/../x"}"#),
    ("bad-parameters-tap-no-identifier", "Tap", #"{"app":"com.example.fuzz"}"#),
    ("bad-parameters-clear-text", "Clear", #"{"app":"com.example.fuzz","identifiers":"tea"}"#),
])

// MARK: The hand-off socket: one call and its NUL, as SocketHandOff.send writes it (the descriptor travels beside it).

let handOffFolder = corpus.appendingPathComponent("hand-off")
try? FileManager.default.removeItem(at: handOffFolder)
try FileManager.default.createDirectory(at: handOffFolder, withIntermediateDirectories: true)
let handOffs: [(String, String)] = [
    ("socket", #"{"method":"io.offstage.Modes.HandOffSocket","parameters":{}}"#),
    ("socket-no-parameters", #"{"method":"io.offstage.Modes.HandOffSocket"}"#),
    ("accessory-session", #"{"method":"io.offstage.Modes.HandOffAccessorySession","parameters":{"name":"scanner"}}"#),
    ("refused-accessory-no-name", #"{"method":"io.offstage.Modes.HandOffAccessorySession","parameters":{}}"#),
    ("refused-accessory-name-number", #"{"method":"io.offstage.Modes.HandOffAccessorySession","parameters":{"name":7}}"#),
    ("refused-accessory-unknown", #"{"method":"io.offstage.Modes.HandOffAccessorySession","parameters":{"name":"printer"}}"#),
]
for (name, call) in handOffs {
    try Data((call + "\0").utf8).write(to: handOffFolder.appendingPathComponent(name))
}
print("hand-off: \(handOffs.count) seeds")
