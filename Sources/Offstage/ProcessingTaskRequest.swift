/// A request to run deferrable maintenance work, as `BGProcessingTaskRequest`: it runs for minutes, and only while
/// the device is idle.
///
/// The app must declare the `processing` background mode and list the identifier in
/// `BGTaskSchedulerPermittedIdentifiers`; it may have at most 10 pending processing requests.
public final class ProcessingTaskRequest: TaskRequest, @unchecked Sendable {
    /// A processing request for the launch handler registered for `identifier`; by default it needs neither a
    /// network nor external power.
    public init(identifier: String) {
        super.init(identifier: identifier, kind: "processing")
    }

    /// Whether the work needs a network connection. Default false.
    public var requiresNetworkConnectivity: Bool {
        get { withFields { $0.requiresNetworkConnectivity } }
        set { withFields { $0.requiresNetworkConnectivity = newValue } }
    }

    /// Whether the work runs only while the device is on external power; set it for heavy work. Default false.
    public var requiresExternalPower: Bool {
        get { withFields { $0.requiresExternalPower } }
        set { withFields { $0.requiresExternalPower = newValue } }
    }
}
