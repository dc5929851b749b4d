import Foundation

/// How a ``BackgroundSession`` behaves: `URLSessionConfiguration.background(withIdentifier:)` on the platform, with
/// the properties a background session honours.
///
/// ```swift
/// var configuration = BackgroundSessionConfiguration.background(withIdentifier: "com.example.app.downloads")
/// configuration.isDiscretionary = true          // wait for Wi-Fi and a charger while in the background
/// let session = BackgroundSession(configuration: configuration, delegate: self)
/// ```
public struct BackgroundSessionConfiguration: Sendable, Hashable {
    /// The session's identifier, unique within the app: the tasks, and the events the app has not handled yet,
    /// belong to it across launches. Recreate the session with the same identifier to hear of them.
    public var identifier: String
    /// Whether the session's tasks wait for good conditions (an unmetered network, a charger, low power mode off)
    /// while the app is not in front. In front they run at once, as on the platform. Default false.
    public var isDiscretionary: Bool
    /// Whether the app is resumed, or launched into the background (reason ``LaunchReason/transferEvents``), when all
    /// of the session's tasks have finished, to hear of them
    /// (``ApplicationDelegate/application(_:handleEventsForBackgroundURLSession:completionHandler:)``). Default true;
    /// when false the events wait until the app runs and recreates the session.
    public var sessionSendsLaunchEvents: Bool
    /// Whether the session's tasks may use a metered network (the platform's "expensive" cellular or hotspot
    /// network). Default true.
    public var allowsExpensiveNetworkAccess: Bool

    /// A configuration with the platform's defaults: not discretionary, sends launch events, allows metered networks.
    public init(
        identifier: String, isDiscretionary: Bool = false, sessionSendsLaunchEvents: Bool = true,
        allowsExpensiveNetworkAccess: Bool = true
    ) {
        self.identifier = identifier
        self.isDiscretionary = isDiscretionary
        self.sessionSendsLaunchEvents = sessionSendsLaunchEvents
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
    }

    /// The platform's spelling: `URLSessionConfiguration.background(withIdentifier:)`.
    public static func background(withIdentifier identifier: String) -> BackgroundSessionConfiguration {
        BackgroundSessionConfiguration(identifier: identifier)
    }
}
