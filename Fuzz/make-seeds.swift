// Writes the committed seed corpora, Fuzz/Corpus/<target>/, from the project's real inputs: the messages the SDK,
// the CLI and the daemon exchange (in the exact form VarlinkCodec writes them), and the example apps' manifests in
// every form the parser reads (XML and binary property list, JSON). Deterministic, so the corpus can be rebuilt and
// reviewed: run `SWIFT_DETERMINISTIC_HASHING=1 swift Fuzz/make-seeds.swift` from the repository root after changing
// an interface or an example. (Without that variable, dictionaries are written in a different key order each run.)
// Seeds are starting points only; the fuzzer's own finds stay in .build-fuzz/corpus and are not committed.
import Foundation

guard ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == "1" else {
    print("run as: SWIFT_DETERMINISTIC_HASHING=1 swift Fuzz/make-seeds.swift (for the same bytes on every run)")
    exit(2)
}

let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
let corpus = root.appendingPathComponent("Fuzz/Corpus")

/// Replaces the seeds of `target` with `seeds` (file name → bytes).
func write(_ target: String, _ seeds: [(String, Data)]) throws {
    let folder = corpus.appendingPathComponent(target)
    try? FileManager.default.removeItem(at: folder)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for (name, data) in seeds {
        try data.write(to: folder.appendingPathComponent(name))
    }
    print("\(target): \(seeds.count) seeds")
}

func text(_ string: String) -> Data { Data(string.utf8) }

// MARK: Varlink messages

/// Calls as the SDK and the CLI send them: `{"method":…,"parameters":…}` with flags only when true.
let calls: [(String, String)] = [
    ("app-attach",
        #"{"method":"io.offstage.App.Attach","parameters":{"launchCompleted":true,"state":"background","#
            + #""openTasks":[{"id":3,"name":"upload"}]},"more":true}"#),
    ("app-callback-done", #"{"method":"io.offstage.App.CallbackDone","parameters":{"id":17}}"#),
    ("app-begin-task",
        #"{"method":"io.offstage.App.BeginBackgroundTask","#
            + #""parameters":{"name":"Finish download \"photos\""}}"#),
    ("app-end-task", #"{"method":"io.offstage.App.EndBackgroundTask","parameters":{"id":18446744073709551615}}"#),
    ("app-time-remaining", #"{"method":"io.offstage.App.BackgroundTimeRemaining","parameters":{}}"#),
    ("app-submit-task",
        #"{"method":"io.offstage.App.SubmitTask","#
            + #""parameters":{"request":{"identifier":"com.example.refresh","kind":"processing","#
            + #""earliestBegin":1763900000.25,"requiresNetwork":true,"requiresExternalPower":null}}}"#),
    ("app-fetch-interval",
        #"{"method":"io.offstage.App.SetFetchInterval","parameters":{"interval":"seconds","#
            + #""seconds":1.5e3}}"#),
    ("app-complete-task",
        #"{"method":"io.offstage.App.CompleteTask","parameters":{"run":42,"result":"newData"},"#
            + #""oneway":true}"#),
    ("control-install", #"{"method":"io.offstage.Control.Install","parameters":{"path":"/srv/apps/News.app"}}"#),
    ("control-open", #"{"method":"io.offstage.Control.Open","parameters":{"id":"com.example.news"}}"#),
    ("control-set-settings",
        #"{"method":"io.offstage.Control.SetSettings","parameters":{"app":null,"#
            + #""changes":{"backgroundAppRefresh":"off","lowPowerMode":"on"}}}"#),
    ("control-log-follow",
        #"{"method":"io.offstage.Control.Log","parameters":{"app":"com.example.news","limit":200,"#
            + #""follow":true},"more":true}"#),
    ("service-get-info", #"{"method":"org.varlink.service.GetInfo"}"#),
    ("service-describe",
        #"{"method":"org.varlink.service.GetInterfaceDescription","#
            + #""parameters":{"interface":"io.offstage.App"},"upgrade":false}"#),
    ("escaped-method", "{\"method\":\"io.offstage.App.\\u0047etDevice\",\"parameters\":null,\"more\":null}"),
]

/// Add calls of io.offstage.Notifications as the SDK sends them: every trigger, content with every member, and requests
/// the core refuses (a repeating interval under 60 s, content too large, a date that cannot be, a bad identifier).
let notificationAdds: [(String, String)] = [
    ("interval", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"tea","content":{"title":"Tea","body":"Ready"},"trigger":{"kind":"timeInterval","seconds":180}}}}"#),
    ("interval-repeating", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"stretch","content":{"title":"Stretch"},"trigger":{"kind":"timeInterval","repeats":true,"seconds":3600}}}}"#),
    ("calendar-daily", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"wake","content":{"title":"Alarm","sound":"default","badge":1},"trigger":{"kind":"calendar","repeats":true,"dateComponents":{"hour":7,"minute":0}}}}}"#),
    ("calendar-zone-weekday", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"standup","content":{"title":"Standup","categoryIdentifier":"meeting","threadIdentifier":"work"},"trigger":{"kind":"calendar","repeats":true,"dateComponents":{"weekday":2,"hour":9,"minute":30,"timeZone":"Europe/Berlin"}}}}}"#),
    ("calendar-leap-day", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"leap","content":{"body":"Leap day"},"trigger":{"kind":"calendar","dateComponents":{"year":2028,"month":2,"day":29,"hour":12}}}}}"#),
    ("date-with-user-info", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"msg/1 \"x\"","content":{"title":"Anna","subtitle":"Lunch?","body":"ünïcode ✓","userInfo":{"thread":{"id":7,"tags":["a",null,true,2.5]},"path":"a/b"}},"trigger":{"kind":"date","date":1800000090.25}}}}"#),
    ("date-past", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"late","content":{"title":"Late"},"trigger":{"kind":"date","date":1700000000}}}}"#),
    ("refused-short-repeat", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"spam","content":{"title":"Spam"},"trigger":{"kind":"timeInterval","repeats":true,"seconds":5}}}}"#),
    ("refused-no-such-day", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"never","content":{"title":"Never"},"trigger":{"kind":"calendar","dateComponents":{"month":2,"day":30}}}}}"#),
    ("refused-empty-content", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"empty","content":{},"trigger":{"kind":"timeInterval","seconds":60}}}}"#),
    ("refused-bad-kind", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"x","content":{"title":"x"},"trigger":{"kind":"weekly"}}}}"#),
    ("refused-wrong-type", #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":7,"content":{"title":"x"},"trigger":{"kind":"date","date":"soon"}}}}"#),
]

/// Calls of io.offstage.Transfers as the SDK sends them, each against the core of the `transfers` checks, where the
/// app (`com.example.fuzz`) has tasks 2 (waiting), 3 (paused) and 4 (cancelled) and the other app tasks 6 (waiting)
/// and 7 (cancelled), all in a session `com.example.downloads` of each. `$DATA` is the app's data folder. Seeds named
/// `refused-` are refused by the conversion or the core, `bad-parameters-` as InvalidParameter; the others succeed.
func transfers(_ method: String, _ parameters: String) -> String {
    #"{"method":"io.offstage.Transfers."# + method + #"","parameters":"# + parameters + "}"
}
func createTask(_ members: String) -> String {
    transfers("CreateTask", #"{"session":"com.example.downloads","# + members + "}")
}
let longPath = String(repeating: "a", count: 8_200)
let transferCalls: [(String, String)] = [
    ("open-session", transfers("OpenSession", #"{"identifier":"com.example.fuzz.uploads","discretionary":true,"sendsLaunchEvents":false,"allowsMeteredNetwork":null}"#)),
    ("open-session-reconfigure", transfers("OpenSession", #"{"identifier":"com.example.downloads","allowsMeteredNetwork":false}"#)),
    ("create-download", createTask(#""kind":"download","url":"https://files.example.com/photos/2026.zip","headers":[{"name":"Authorization","value":"Bearer abc"}],"filename":"photos.zip""#)),
    ("create-download-every-member", createTask(#""kind":"download","url":"HTTP://files.example.com:8080/a/b.tar.gz?x=1#top","method":"get","headers":[],"file":null,"filename":null,"discretionary":true,"earliestBegin":1800003600.5"#)),
    ("create-download-credentials", createTask(#""kind":"download","url":"https://user:secret@files.example.com/private.bin""#)),
    ("create-download-dot-filename", createTask(#""kind":"download","url":"https://files.example.com/x","filename":"../../.profile""#)),
    ("create-upload", createTask(#""kind":"upload","url":"https://upload.example.com/put","method":"POST","file":"$DATA/upload.bin""#)),
    ("tasks", transfers("Tasks", #"{"session":"com.example.downloads"}"#)),
    ("acknowledge", transfers("Acknowledge", #"{"session":"com.example.downloads","ids":[4,7,2,999]}"#)),
    ("change-pause", transfers("ChangeTask", #"{"id":2,"change":"pause"}"#)),
    ("change-resume", transfers("ChangeTask", #"{"id":3,"change":"resume"}"#)),
    ("change-cancel", transfers("ChangeTask", #"{"id":2,"change":"cancel"}"#)),
    ("refused-complete-events-not-issued", transfers("CompleteEvents", #"{"run":99}"#)),
    ("refused-ftp-url", createTask(#""kind":"download","url":"ftp://files.example.com/x""#)),
    ("refused-no-host", createTask(#""kind":"download","url":"https:///x""#)),
    ("refused-port-only-host", createTask(#""kind":"download","url":"https://:443/x""#)),
    ("refused-url-spaces", createTask(#""kind":"download","url":"https://files.example.com/a b""#)),
    ("refused-long-url", createTask(#""kind":"download","url":"https://files.example.com/"# + longPath + #"""#)),
    ("refused-upload-outside", createTask(#""kind":"upload","url":"https://u.example.com/","file":"$DATA/../com.example.other/secret.bin""#)),
    ("refused-upload-link-out", createTask(#""kind":"upload","url":"https://u.example.com/","file":"$DATA/link-out""#)),
    ("refused-upload-folder", createTask(#""kind":"upload","url":"https://u.example.com/","file":"$DATA/dir""#)),
    ("refused-upload-elsewhere", createTask(#""kind":"upload","url":"https://u.example.com/","file":"/etc/passwd""#)),
    ("refused-upload-relative", createTask(#""kind":"upload","url":"https://u.example.com/","file":"upload.bin""#)),
    ("refused-upload-no-file", createTask(#""kind":"upload","url":"https://u.example.com/""#)),
    ("refused-download-with-file", createTask(#""kind":"download","url":"https://files.example.com/x","file":"$DATA/upload.bin""#)),
    ("refused-download-put", createTask(#""kind":"download","url":"https://files.example.com/x","method":"PUT""#)),
    ("refused-reserved-header", createTask(#""kind":"download","url":"https://files.example.com/x","headers":[{"name":"Range","value":"bytes=0-"}]"#)),
    ("refused-header-newline", createTask(#""kind":"download","url":"https://files.example.com/x","headers":[{"name":"X-A","value":"a\r\nHost: b"}]"#)),
    ("refused-unknown-session", transfers("CreateTask", #"{"session":"com.example.nope","kind":"download","url":"https://files.example.com/x"}"#)),
    ("refused-kind", createTask(#""kind":"stream","url":"https://files.example.com/x""#)),
    ("refused-earliest-next-month", createTask(#""kind":"download","url":"https://files.example.com/x","earliestBegin":1802600000"#)),
    ("refused-other-apps-task", transfers("ChangeTask", #"{"id":6,"change":"cancel"}"#)),
    ("refused-change-word", transfers("ChangeTask", #"{"id":2,"change":"stop"}"#)),
    ("refused-resume-waiting", transfers("ChangeTask", #"{"id":2,"change":"resume"}"#)),
    ("refused-empty-session-identifier", transfers("OpenSession", #"{"identifier":""}"#)),
    ("refused-tasks-unknown-session", transfers("Tasks", #"{"session":"com.example.nope"}"#)),
    ("bad-parameters-wrong-type", createTask(#""kind":"download","url":7"#)),
    ("bad-parameters-negative-id", transfers("ChangeTask", #"{"id":-1,"change":"cancel"}"#)),
    ("bad-parameters-missing-ids", transfers("Acknowledge", #"{"session":"com.example.downloads"}"#)),
]

/// Continued-processing calls of io.offstage.App, each against the two cores of the `continued-processing` checks:
/// one with the slots free, one with both taken (the app's own run 4 is `com.example.fuzz.export.running`) and
/// `com.example.fuzz.export.queued` queued. Seeds named `refused-` are refused in both, `bad-parameters-` as
/// InvalidParameter; the others are accepted in at least one.
func submit(_ members: String) -> String {
    #"{"method":"io.offstage.App.SubmitTask","parameters":{"request":{"kind":"continued","# + members + "}}}"
}
func report(_ members: String) -> String { #"{"method":"io.offstage.App.ReportTaskProgress","parameters":{"# + members + "}}" }
let continuedCalls: [(String, String)] = [
    ("submit-queue", submit(#""identifier":"com.example.fuzz.export.1","title":"Exporting 120 photos","subtitle":"Album “Summer”","strategy":"queue""#)),
    ("submit-fail", submit(#""identifier":"com.example.fuzz.export.2","title":"Exporting","strategy":"fail""#)),
    ("submit-defaults", submit(#""identifier":"com.example.fuzz.export.3","title":"Sync","earliestBegin":null,"requiresNetwork":true"#)),
    ("submit-replace-queued", submit(#""identifier":"com.example.fuzz.export.queued","title":"Exporting 4 videos","subtitle":"""#)),
    ("submit-already-running", submit(#""identifier":"com.example.fuzz.export.running","title":"Again""#)),
    ("report-progress", report(#""run":4,"completed":21,"total":50"#)),
    ("report-progress-title", report(#""run":4,"completed":60,"total":50,"title":"Exporting 121 photos","subtitle":"""#)),
    ("report-progress-unknown-total", report(#""run":4,"completed":7,"total":0,"title":null"#)),
    ("report-progress-huge", report(#""run":4,"completed":9223372036854775807,"total":1"#)),
    ("refused-report-unknown-run", report(#""run":999,"completed":1,"total":2"#)),
    ("refused-blank-title", submit(#""identifier":"com.example.fuzz.export.5","title":" \t ""#)),
    ("refused-long-title", submit(#""identifier":"com.example.fuzz.export.5","title":""# + String(repeating: "é", count: 129) + #"""#)),
    ("refused-control-subtitle", submit(#""identifier":"com.example.fuzz.export.5","title":"Export","subtitle":"two\nlines""#)),
    ("refused-earliest-begin", submit(#""identifier":"com.example.fuzz.export.5","title":"Export","earliestBegin":1800000600"#)),
    ("refused-not-listed", submit(#""identifier":"com.example.other.export.1","title":"Export""#)),
    ("refused-report-negative", report(#""run":4,"completed":-1,"total":10"#)),
    ("refused-report-blank-title", report(#""run":4,"completed":1,"total":10,"title":"""#)),
    ("bad-parameters-no-title", submit(#""identifier":"com.example.fuzz.export.5""#)),
    ("bad-parameters-strategy", submit(#""identifier":"com.example.fuzz.export.5","title":"Export","strategy":"wait""#)),
    ("bad-parameters-wrong-type", submit(#""identifier":"com.example.fuzz.export.5","title":7"#)),
    ("bad-parameters-report-overflow", report(#""run":4,"completed":9223372036854775808,"total":1"#)),
]

/// Replies and errors as the daemon sends them.
let replies: [(String, String)] = [
    ("reply-attach-app",
        #"{"parameters":{"app":{"id":"com.example.news","pid":4242,"multitaskingSupported":true,"#
            + #""dataDirectory":"/var/lib/offstage/apps/com.example.news"}},"continues":true}"#),
    ("reply-callback",
        #"{"parameters":{"callback":{"id":9,"kind":"runTask","run":3,"#
            + #""taskIdentifier":"com.example.refresh","taskKind":"refresh","deadline":1763900030.5}},"#
            + #""continues":true}"#),
    ("reply-begin", #"{"parameters":{"id":7,"timeRemaining":29.999}}"#),
    ("reply-empty", #"{"parameters":{}}"#),
    ("error-invalid-parameter",
        #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"id","#
            + #""description":"id: expected a non-negative integer"}}"#),
    ("error-not-permitted",
        #"{"error":"io.offstage.App.NotPermitted","#
            + #""parameters":{"message":"the manifest does not declare fetch","#
            + #""fix":"add fetch to UIBackgroundModes"}}"#),
    ("error-too-large",
        #"{"error":"io.offstage.Protocol.MessageTooLarge","parameters":{"limit":1048576,"#
            + #""description":"A message was longer than 1048576 bytes"}}"#),
]

/// JSON that is not an envelope, for the scanner's grammar: every kind of value, escapes, numbers, nesting.
let grammar: [(String, String)] = [
    ("empty-object", "{}"),
    ("whitespace", " \t\r\n{ \"a\" : [ ] , \"b\" : { } } \n"),
    ("escapes", #"{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","\u006b":"v"}"#),
    ("numbers", #"{"n":[0,-0,1.5,-2.25e-3,6.02E+23,1e308,123456789012345678901234567890]}"#),
    ("literals", #"{"t":true,"f":false,"z":null}"#),
    ("nested", #"{"a":[{"b":[{"c":[[[]]]}]}]}"#),
    ("not-an-object", #"[1,"two",{"three":3}]"#),
    ("utf8", "{\"κλειδί\":\"τιμή ✓\"}"),
]

/// An object holding `arrays` nested arrays: 511 is the deepest the scanner accepts (the object is level 1 of 512),
/// 512 the shallowest it refuses; Foundation must agree on both sides of the limit.
func nested(_ arrays: Int) -> String {
    #"{"a":"# + String(repeating: "[", count: arrays) + String(repeating: "]", count: arrays) + "}"
}

let messages = calls + replies
try write("notification-add", notificationAdds.map { ($0.0, text($0.1)) })
try write("transfers", transferCalls.map { ($0.0, text($0.1)) })
try write("continued-processing", continuedCalls.map { ($0.0, text($0.1)) })
try write("varlink-codec", messages.map { ($0.0, text($0.1)) } + grammar.prefix(4).map { ($0.0, text($0.1)) })
try write(
    "json-envelope",
    (messages.prefix(6) + replies.prefix(2) + grammar + [("depth-512", nested(511)), ("depth-513", nested(512))])
        .map { ($0.0, text($0.1)) })

/// A framing input: one byte for the limit (`limit` 1…128 is written as `limit - 1`), two for the seed of the read
/// pattern, then the stream.
func framing(limit: Int, seed: (UInt8, UInt8), _ stream: [String], tail: String = "") -> Data {
    var bytes: [UInt8] = [UInt8(limit - 1), seed.0, seed.1]
    for message in stream { bytes += Array(message.utf8) + [0] }
    bytes += Array(tail.utf8)
    return Data(bytes)
}

/// A framing input with the limit byte given as is (128 and above: a limit of `64 * (byte - 127)` bytes).
func framing(limitByte: UInt8, seed: (UInt8, UInt8), _ stream: [String]) -> Data {
    var data = framing(limit: 1, seed: seed, stream)
    data[0] = limitByte
    return data
}

try write("varlink-framing", [
    ("three-messages", framing(limit: 64, seed: (0, 1), [#"{"method":"a.b.C"}"#, "{}", #"{"parameters":{}}"#])),
    ("partial-tail", framing(limit: 64, seed: (7, 3), [#"{"parameters":{"id":7}}"#], tail: #"{"method":"io.off"#)),
    ("empty-messages", framing(limit: 8, seed: (0, 0), ["", "", "{}", ""])),
    ("at-the-limit", framing(limit: 16, seed: (1, 2), ["0123456789abcdef", "x"])),
    ("over-the-limit", framing(limit: 16, seed: (3, 4), ["short", "0123456789abcdefg", "never delivered"])),
    ("long-unterminated", framing(limit: 32, seed: (9, 9), ["ok"], tail: String(repeating: "y", count: 40))),
    ("real-calls", framing(limitByte: 130, seed: (5, 5), calls.prefix(5).map(\.1))),
    ("real-replies", framing(limitByte: 128, seed: (2, 8), replies.map(\.1))),
])

// MARK: Manifests

/// The example apps' manifests as committed, plus one that uses every key of MAN-1.
var plists: [(String, Data)] = []
let examples = root.appendingPathComponent("Examples")
for name in try FileManager.default.contentsOfDirectory(atPath: examples.path).sorted() {
    let file = examples.appendingPathComponent(name).appendingPathComponent("Info.plist")
    if let data = try? Data(contentsOf: file) { plists.append((name, data)) }
}
let everyKey: [String: Any] = [
    "CFBundleIdentifier": "com.example.every-key",
    "CFBundleExecutable": "EveryKey",
    "UIBackgroundModes": ["audio", "location", "voip", "fetch", "remote-notification", "processing",
                          "external-accessory", "bluetooth-central", "bluetooth-peripheral", "newsstand-content"],
    "BGTaskSchedulerPermittedIdentifiers": ["com.example.refresh", "com.example.cleanup"],
    "UIApplicationExitsOnSuspend": false,
    "OffstageLinux": [
        "Arguments": ["--verbose", "--cache=/tmp/x y"],
        "Environment": ["LANG": "C.UTF-8", "FEATURE": "on"],
        "MemoryLimitMB": 256,
    ] as [String: Any],
]
plists.append(("EveryKey", try PropertyListSerialization.data(fromPropertyList: everyKey, format: .xml, options: 0)))

var plistSeeds: [(String, Data)] = []
var jsonSeeds: [(String, Data)] = []
for (name, data) in plists {
    plistSeeds.append(("\(name)-xml.plist", data))
    let object = try PropertyListSerialization.propertyList(from: data, format: nil)
    let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
    plistSeeds.append(("\(name)-binary.plist", binary))
    jsonSeeds.append(("\(name).json", try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
}
// Refusals the parser must explain (MAN-2): a wrong type, an unknown mode, a missing key.
plistSeeds.append(("wrong-type-xml.plist", text("""
    <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>CFBundleIdentifier</key>\
    <string>a.b</string><key>CFBundleExecutable</key><string>x</string><key>UIBackgroundModes</key>\
    <string>fetch</string><key>OffstageLinux</key><dict><key>MemoryLimitMB</key><integer>-1</integer></dict>\
    </dict></plist>
    """)))
jsonSeeds.append(
    ("unknown-mode.json",
     text(#"{"CFBundleIdentifier":"a.b","CFBundleExecutable":"x","UIBackgroundModes":["teleport"]}"#)))
jsonSeeds.append(
    ("missing-executable.json", text(#"{"CFBundleIdentifier":"a.b","OffstageLinux":{"Environment":{"A":"1"}}}"#)))
try write("manifest-plist", plistSeeds)
try write("manifest-json", jsonSeeds)

// MARK: Push requests

/// Provider API requests as the push-request target frames them (`METHOD PATH`, header lines, an empty line, the
/// body), as app servers send them to the gateway (SPEC NT-3), and one refused for each reason the request rules give
/// (`refused-<Reason>`); two are a payload alone, which the target puts under a valid head.
let deviceToken = String(repeating: "0123456789abcdef", count: 4)
let bearer = "authorization: bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxODAwMDAwMDAwfQ.c2ln"
let uuid = "apns-id: 6e0c8c1a-3b4f-4d2e-9a51-0f6b2c7d8e90"
func pushRequest(_ head: [String], _ body: String) -> Data { text(head.joined(separator: "\n") + "\n\n" + body) }
func post(_ headers: [String], path: String = "/3/device/\(deviceToken)", method: String = "POST") -> [String] {
    ["\(method) \(path)"] + headers
}
let alertHeaders = [bearer, "apns-topic: com.example.messenger", "apns-push-type: alert", uuid]
let alertBody = #"{"aps":{"alert":{"title":"Ada","body":"Lunch?"},"badge":3,"sound":"default","thread-id":"t1"}}"#
let background = #"{"aps":{"content-available":1},"message":"m-42"}"#
try write("push-request", [
    ("alert", pushRequest(post(alertHeaders), alertBody)),
    ("alert-uppercase-token-no-id",
        pushRequest(post([bearer, "apns-topic: com.example.messenger"], path: "/3/device/\(deviceToken.uppercased())"), #"{"aps":{"alert":"Hi"}}"#)),
    ("background",
        pushRequest(post([bearer, "apns-topic: com.example.messenger", "apns-push-type: background", "apns-priority: 5", uuid]), background)),
    ("background-inferred", pushRequest(post([bearer, "apns-topic: com.example.messenger", uuid]), background)),
    ("voip",
        pushRequest(
            post([bearer, "apns-topic: com.example.phone.voip", "apns-push-type: voip", "apns-priority: 10", "apns-expiration: 0", uuid]),
            #"{"aps":{},"caller":"Ada","handle":"+33 6 12 34 56 78"}"#)),
    ("collapse-expiration",
        pushRequest(
            post(alertHeaders + ["apns-collapse-id: lunch", "apns-expiration: 1800000600", "apns-priority: 5", "x-extra: kept"]),
            alertBody)),
    ("every-key",
        pushRequest(
            post(alertHeaders),
            #"{"aps":{"alert":{"title":"T","subtitle":"S","body":"B","launch-image":"l.png","title-loc-key":"TK","#
                + #""title-loc-args":["a"],"subtitle-loc-key":"SK","subtitle-loc-args":["b"],"loc-key":"K","loc-args":["c","d"]},"#
                + #""badge":0,"sound":{"name":"alarm.caf","critical":1,"volume":0.5},"category":"MSG","mutable-content":1,"#
                + #""interruption-level":"time-sensitive","relevance-score":0.75},"acme":{"id":7}}"#)),
    ("body-only-alert", text(#"{"aps":{"alert":"Hi","sound":"default"}}"#)),
    ("body-only-background", text(#"{"aps":{"content-available":1}}"#)),
    ("refused-BadPath", pushRequest(post(alertHeaders, path: "/4/device/\(deviceToken)", method: "GET"), alertBody)),
    ("refused-MethodNotAllowed", pushRequest(post(alertHeaders, method: "GET"), alertBody)),
    ("refused-MissingDeviceToken", pushRequest(post(alertHeaders, path: "/3/device/"), alertBody)),
    ("refused-BadDeviceToken", pushRequest(post(alertHeaders, path: "/3/device/\(deviceToken.dropLast())"), alertBody)),
    ("refused-DuplicateHeaders", pushRequest(post(alertHeaders + ["apns-topic: com.example.other"]), alertBody)),
    ("refused-MissingProviderToken",
        pushRequest(post(["authorization: basic dXNlcg==", "apns-topic: com.example.messenger", uuid]), alertBody)),
    ("refused-MissingTopic", pushRequest(post([bearer, uuid]), alertBody)),
    ("refused-BadTopic", pushRequest(post([bearer, "apns-topic: com example messenger", uuid]), alertBody)),
    ("refused-BadMessageId", pushRequest(post([bearer, "apns-topic: com.example.messenger", "apns-id: 42"]), alertBody)),
    ("refused-InvalidPushType", pushRequest(post([bearer, "apns-topic: com.example.messenger", "apns-push-type: silent"]), alertBody)),
    ("refused-BadPriority",
        pushRequest(post([bearer, "apns-topic: com.example.messenger", "apns-push-type: background", "apns-priority: 10"]), background)),
    ("refused-BadExpirationDate", pushRequest(post(alertHeaders + ["apns-expiration: 99999999999"]), alertBody)),
    ("refused-BadCollapseId", pushRequest(post(alertHeaders + ["apns-collapse-id: " + String(repeating: "c", count: 65)]), alertBody)),
    ("refused-PayloadEmpty", pushRequest(post(alertHeaders), "")),
    ("refused-PayloadEmpty-no-aps", pushRequest(post(alertHeaders), #"{"alert":"Hi"}"#)),
    ("refused-PayloadEmpty-not-json", text("{\"aps\":{\"alert\":\"Hi\"")),
    ("refused-PayloadEmpty-badge-string", pushRequest(post(alertHeaders), #"{"aps":{"badge":"3"}}"#)),
    ("refused-PayloadTooLarge",
        pushRequest(post(alertHeaders), #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "a", count: 4_100) + #""}"#)),
])
