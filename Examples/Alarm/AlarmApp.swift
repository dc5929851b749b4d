import Foundation
import Offstage

/// The "time to wake up" alarm (SPEC NT-1, NT-2): at launch the app schedules one local notification, identifier
/// `alarm` — title "Alarm", body "Time to wake up", the default sound, badge 1 — replacing the one it scheduled before.
/// The notification fires at its time whether or not the app is running. When the user taps it
/// (`offstage notifications tap com.example.alarm alarm`) the app is opened — launched, with reason `notification`,
/// if it was not running — and prints that it heard the tap, then clears its badge. If the alarm fires while the app
/// is in front, the app asks for a banner, so the user sees it too.
///
/// When the alarm goes off, first of what is given:
/// - `--in-seconds N` or `--at HH:MM` among the arguments;
/// - `ALARM_IN_SECONDS=N` (once, N seconds after launch) or `ALARM_AT=HH:MM` (every day at that time, on the
///   device's clock) in the environment — the manifest sets `ALARM_IN_SECONDS=60`;
/// - what the app saved in its ``DurableStore`` the last time it was given one;
/// - every day at 07:00.
///
/// Every event is one line on standard output.
@MainActor
final class AlarmDelegate: ApplicationDelegate, UserNotificationCenterDelegate {
    let center = UserNotificationCenter.current()

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        center.delegate = self  // before returning: a launch for a tap brings the response right after
        switch options.reason {
        case .notification, .notificationAction:
            say("launched for the alarm: it stays as it is")
        default:
            let time = AlarmTime.chosen(
                arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
            Task { await schedule(time) }
        }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }

    /// Schedules the alarm, replacing the one scheduled before (same identifier).
    func schedule(_ time: AlarmTime) async {
        var content = NotificationContent()
        content.title = "Alarm"
        content.body = "Time to wake up"
        content.sound = .default
        content.badge = 1
        let trigger: any NotificationTrigger = time.trigger
        do {
            let allowed = try await center.requestAuthorization(options: [.alert, .sound, .badge])
            if !allowed { say("notifications are off for this app: the alarm fires but is not shown") }
            try await center.add(NotificationRequest(identifier: "alarm", content: content, trigger: trigger))
            let next =
                (trigger as? CalendarNotificationTrigger)?.nextTriggerDate()
                ?? (trigger as? TimeIntervalNotificationTrigger)?.nextTriggerDate()
            say("scheduled alarm \(time), next at \(next.map(clock) ?? "?")")
        } catch {
            say("could not schedule the alarm: \(error)")  // the code, what was wrong and the fix
        }
    }

    func userNotificationCenter(
        _ center: UserNotificationCenter, willPresent notification: UserNotification
    ) async -> NotificationPresentationOptions {
        say("alarm '\(notification.request.identifier)' went off while the app is in front: showing a banner")
        return [.banner, .sound]
    }

    func userNotificationCenter(_ center: UserNotificationCenter, didReceive response: NotificationResponse) async {
        let identifier = response.notification.request.identifier
        switch response.actionIdentifier {
        case NotificationResponse.defaultActionIdentifier: say("the user tapped alarm '\(identifier)': good morning")
        case NotificationResponse.dismissActionIdentifier: say("the user dismissed alarm '\(identifier)'")
        default: say("the user chose \(response.actionIdentifier) on alarm '\(identifier)'")
        }
        do {
            try await center.setBadgeCount(0)
            say("badge cleared")
        } catch {
            say("could not clear the badge: \(error)")
        }
    }
}

/// When the alarm goes off: once, some seconds after launch, or every day at a time on the device's clock.
enum AlarmTime: Codable, CustomStringConvertible {
    case inSeconds(Double)
    case daily(hour: Int, minute: Int)

    /// The time given in the arguments or the environment (saved for later launches), else the saved one, else 07:00.
    static func chosen(arguments: [String], environment: [String: String]) -> AlarmTime {
        let given =
            option("--in-seconds", in: arguments).flatMap(seconds) ?? option("--at", in: arguments).flatMap(daily)
            ?? environment["ALARM_IN_SECONDS"].flatMap(seconds) ?? environment["ALARM_AT"].flatMap(daily)
        if let given {
            do { try DurableStore.standard.set(given, forKey: "alarm") } catch {
                say("could not save the alarm time: \(error)")
            }
            return given
        }
        return DurableStore.standard.value(AlarmTime.self, forKey: "alarm") ?? .daily(hour: 7, minute: 0)
    }

    static func seconds(_ text: String) -> AlarmTime? {
        Double(text).flatMap { $0 > 0 ? .inSeconds($0) : nil }
    }

    /// `HH:MM`, 00:00 to 23:59.
    static func daily(_ text: String) -> AlarmTime? {
        let parts = text.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2, (0...23).contains(parts[0]), (0...59).contains(parts[1]) else { return nil }
        return .daily(hour: parts[0], minute: parts[1])
    }

    var trigger: any NotificationTrigger {
        switch self {
        case .inSeconds(let seconds): TimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
        case .daily(let hour, let minute):
            // No time zone: the device's, followed when the user changes it — an alarm clock.
            CalendarNotificationTrigger(dateMatching: DateComponents(hour: hour, minute: minute), repeats: true)
        }
    }

    var description: String {
        switch self {
        case .inSeconds(let seconds): "in \(seconds.formatted()) s"
        case .daily(let hour, let minute): String(format: "every day at %02d:%02d", hour, minute)
        }
    }
}

func option(_ name: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func say(_ text: String) { print(clock(Date()) + " " + text) }

/// A wall-clock time, `HH:MM:SS`.
func clock(_ date: Date) -> String {
    var whole = time_t(date.timeIntervalSince1970.rounded(.down))
    var time = tm()
    localtime_r(&whole, &time)
    return String(format: "%02d:%02d:%02d", time.tm_hour, time.tm_min, time.tm_sec)
}

@main
struct AlarmMain {
    @MainActor static func main() {
        Application.main(delegate: AlarmDelegate())
    }
}
