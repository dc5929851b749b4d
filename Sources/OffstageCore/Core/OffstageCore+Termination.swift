/// Termination escalates: will-terminate (if the app is running and attached) → SIGTERM → SIGKILL, each stage
/// bounded by a deadline. A suspended app gets no callback (SPEC LC-5).
extension OffstageCore {
    /// How hard to end a process.
    enum TerminationStyle: Int, Comparable {
        /// will-terminate first where the app can hear it, then signals.
        case graceful
        /// SIGTERM now, SIGKILL after the grace period.
        case signal
        /// SIGKILL now.
        case immediate

        static func < (lhs: TerminationStyle, rhs: TerminationStyle) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    mutating func terminate(_ id: AppID, _ reason: TerminationReason, _ requested: TerminationStyle, _ now: Instant) {
        guard var process = apps[id]?.process else { return }
        var style = requested
        if process.frozen { style = .immediate }  // a frozen app cannot run a callback or a SIGTERM handler
        if style == .graceful && !(process.attached && process.launchCompleted) { style = .signal }
        if let current = process.termination {
            let currentStyle: TerminationStyle =
                switch current.stage {
                case .willTerminate: .graceful
                case .signaled: .signal
                case .killed: .immediate
                }
            guard style > currentStyle else { return }
        }
        process.suspendAt = nil
        // A push not handed yet is not handed to an app that is ending (SPEC NT-4): its run is cut off with the process.
        process.queue.removeAll { if case .remoteNotification = $0 { true } else { false } }
        switch style {
        case .graceful:
            process.termination = TerminationProgress(
                reason: reason, stage: .willTerminate, escalateAt: now + configuration.willTerminate)
            apps[id]?.process = process
            enqueue(id, .willTerminate)
        case .signal:
            process.termination = TerminationProgress(
                reason: reason, stage: .signaled, escalateAt: now + configuration.grace)
            apps[id]?.process = process
            if let pid = process.pid { emit(.terminate(id, pid: pid)) }
        case .immediate:
            process.termination = TerminationProgress(reason: reason, stage: .killed, escalateAt: nil)
            apps[id]?.process = process
            if let pid = process.pid { emit(.kill(id, pid: pid)) }
        }
        let kind: LogEntry.Kind = reason.isWatchdog ? .watchdog : (style == .immediate ? .kill : .terminate)
        let how = style == .immediate ? " (SIGKILL)" : style == .signal ? " (SIGTERM)" : " (will-terminate)"
        log(now, id, kind, "\(reason)\(how)")
        if device.foregroundApp == id {
            device.foregroundApp = nil
            emit(.saveDevice)
        }
        touched.insert(id)
    }

    /// The current stage's deadline passed: go one stage further.
    mutating func escalate(_ id: AppID, _ now: Instant) {
        guard var process = apps[id]?.process, var termination = process.termination else { return }
        switch termination.stage {
        case .willTerminate:
            termination.stage = .signaled
            termination.escalateAt = now + configuration.grace
            if let pid = process.pid { emit(.terminate(id, pid: pid)) }
            log(now, id, .watchdog, "did not exit within \(format(configuration.willTerminateTimeout)) s of will-terminate (SIGTERM)")
        case .signaled:
            termination.stage = .killed
            termination.escalateAt = nil
            if let pid = process.pid { emit(.kill(id, pid: pid)) }
            log(now, id, .kill, "still alive \(format(configuration.terminationGrace)) s after SIGTERM (SIGKILL)")
        case .killed:
            termination.escalateAt = nil
        }
        process.termination = termination
        apps[id]?.process = process
    }
}

extension TerminationReason {
    /// Whether a watchdog (rather than the user or the system) ended the app.
    var isWatchdog: Bool {
        switch self {
        case .launchTimeout, .callbackTimeout, .backgroundTaskOverrun, .didNotReattach, .taskOverrun,
            .remoteNotificationOverrun:
            true
        default: false
        }
    }
}
