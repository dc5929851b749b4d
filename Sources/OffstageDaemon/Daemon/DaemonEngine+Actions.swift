import Foundation
import Logging
import NIOCore
import OffstageCore
import OffstageProtocol

/// Carrying out the core's actions. Nothing here decides: a failure is reported back to the core as an input.
extension DaemonEngine {
    func perform(_ action: CoreAction) {
        switch action {
        case .launch(let id, let plan):
            launch(id, plan)
        case .deliver(let id, let pid, let callback):
            pushHanded(callback)
            guard let stream = streams[id], stream.pid == pid, stream.responder.replyMore(
                AppInterface.AttachReply(callback: AppInterface.CallbackMessage(callback)))
            else {
                // The stream closed under us; the close handler tells the core, which sends it again on reattach.
                logger.debug("callback not delivered: no stream", metadata: ["offstage.app": "\(id)"])
                return
            }
            let label = CallbackLabel(callback.kind)
            metrics.callbackDelivered(label)
            // A callback sent again after a reattach keeps its first time: the latency is the app's whole answer.
            if pendingCallbacks[callback.id] == nil {
                pendingCallbacks[callback.id] = PendingCallback(
                    app: id, label: label, deliveredAt: DaemonMetrics.monotonicNanoseconds())
            }
        case .freeze(let id, let pid):
            do {
                let appGroup = try group(for: id)
                let start = DaemonMetrics.monotonicNanoseconds()
                try control.freeze(appGroup, leader: pid)
                metrics.frozen(nanoseconds: DaemonMetrics.monotonicNanoseconds() - start)
            } catch {
                metrics.freezeFailures.increment()
                actionQueue.append(contentsOf: core.freezeFailed(id, pid: pid, message: "\(error)", at: now))
            }
        case .thaw(let id, let pid):
            do {
                try control.thaw(try group(for: id), leader: pid)
                metrics.thaws.increment()
            } catch {
                logger.warning("thaw failed", metadata: ["offstage.app": "\(id)", "offstage.error": "\(error)"])
            }
        case .terminate(let id, let pid):
            do {
                try control.terminate(try group(for: id), leader: pid)
                metrics.terminated(.sigterm)
            } catch {
                logger.warning("SIGTERM failed", metadata: ["offstage.app": "\(id)", "offstage.error": "\(error)"])
            }
        case .kill(let id, let pid):
            // The reason goes to the store before the signal: a daemon killed before it sees the exit leaves it to the
            // next, which records the app's end as this one would have (SPEC MEM-1, LC-8).
            if let reason = core.apps[id]?.process?.termination?.reason {
                persist { try store.setProcessEnding(of: id, pid: pid, reason) }
            }
            do {
                try control.kill(try group(for: id), leader: pid)
                metrics.terminated(.sigkill)
            } catch {
                logger.warning("SIGKILL failed", metadata: ["offstage.app": "\(id)", "offstage.error": "\(error)"])
            }
        case .log(let entry):
            eventLog.pending.append(entry)
        case .saveApp(let id):
            durable.unsavedApps.insert(id)
        case .saveDevice:
            durable.deviceUnsaved = true
        case .forget(let id, let bundlePath):
            forget(id, bundlePath: bundlePath)
        case .watchSocket(_, let token, let armed):
            handOffs?.watch(token, armed: armed)
        case .closeSocket(_, let token):
            handOffs?.close(token)
        case .watchAccessory(let id, let name, let path):
            watchAccessory(id, name: name, path: path)
        case .notification(let notification):
            performNotifications([notification])
        case .push(let push):
            performPush(push)
        case .transfer(let transfer):
            performTransfer(transfer)
        case .continuedProgress(let id, let run, let view):
            showProgress(id, run: run, view)
        case .recordHistory(let record):
            durable.pendingHistory.append(record)
        case .unwatchAccessory(let id, let name):
            unwatchAccessory(id, name: name)
        case .network(let change):
            network.restrict(change)
        case .usage(let change):
            recordUsage(change)
        }
    }

    /// The app answered the callback `callback`: its latency, if this daemon delivered it, is recorded.
    func callbackAnswered(_ callback: CallbackID, by app: AppID) {
        guard let pending = pendingCallbacks[callback], pending.app == app else { return }
        pendingCallbacks[callback] = nil
        metrics.callbackAnswered(
            pending.label, nanoseconds: DaemonMetrics.monotonicNanoseconds() - pending.deliveredAt)
    }

    func persist(_ write: () throws -> Void) {
        do {
            try write()
        } catch {
            logger.error("store write failed", metadata: ["offstage.error": "\(error)"])
        }
    }

    func launch(_ id: AppID, _ plan: LaunchPlan) {
        guard let entry = core.apps[id] else { return }
        let manifest = entry.app.manifest
        let dataDirectory = paths.data(id)
        var environment: [String: String] = [:]
        let inherited = ProcessInfo.processInfo.environment
        // Where the machine's sound server is (PULSE_SERVER) is a fact of the machine, like XDG_RUNTIME_DIR, where
        // libpulse looks by default: an app that plays audio (SPEC MODE-1) must reach the server the user hears.
        for key in ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME", "XDG_RUNTIME_DIR", "PULSE_SERVER"] {
            environment[key] = inherited[key]
        }
        environment["PATH"] = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        environment.merge(manifest.linux.environment) { _, app in app }
        environment["OFFSTAGE_SOCKET"] = configuration.socketPath
        environment["OFFSTAGE_APP_ID"] = id.rawValue
        environment["OFFSTAGE_LAUNCH_REASON"] = plan.reason.rawValue
        environment["OFFSTAGE_DATA_DIR"] = dataDirectory
        environment["OFFSTAGE_BUNDLE_DIR"] = entry.app.bundlePath
        var request = SpawnRequest(
            executable: entry.app.bundlePath + "/" + manifest.executable, arguments: manifest.linux.arguments,
            environment: environment, workingDirectory: dataDirectory, outputPath: paths.output(id))
        // Its memory limit holds from its first instruction (SPEC MEM-2).
        request.alsoJoin = memoryGroupsForLaunch(id)
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: (paths.output(id) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let pid = try watcher.spawn(request, in: try group(for: id), using: control)
            metrics.launches.increment()
            appsByPid[pid] = id
            let startTime = ProcFS().startTime(of: pid) ?? 0
            // Persist, then act: a daemon that crashes from here on finds this process again.
            persist { try store.saveProcess(.init(app: id, pid: pid, startTime: startTime, startedAt: now)) }
            actionQueue.append(contentsOf: core.processStarted(id, launch: plan.launch, pid: pid, at: now))
            watchMemoryLimits()
        } catch {
            metrics.launchFailures.increment()
            actionQueue.append(contentsOf: core.launchFailed(id, launch: plan.launch, message: "\(error)", at: now))
        }
    }

    func forget(_ id: AppID, bundlePath: String) {
        // Its state and history still to be written would otherwise come back after the delete.
        durable.forget(id)
        // Its device token dies with it: the gateway answers 410 Unregistered from now on (SPEC NT-3).
        unregisterForPush(id, because: "the app was uninstalled")
        unsubscribeWebPush(id, because: "the app was uninstalled")
        // Through the writer, after any save of this app still queued there, so none can bring it back.
        let store = store
        durable.write("uninstall") { try store.deleteApp(id) }
        // The folders go on the writer's thread too, so a reinstall (which waits for this reply) finds them gone,
        // and a large bundle does not hold up the event loop.
        let (installer, data, output) = (installer, paths.data(id), paths.output(id))
        durable.write("uninstall files") {
            installer.remove(bundleAt: bundlePath)
            try? FileManager.default.removeItem(atPath: data)
            try? FileManager.default.removeItem(atPath: output)
        }
        usage.forget(id)
        // Its rules go while the cgroup they name still exists.
        network.unregister(id)
        if let group = groups.removeValue(forKey: id) { control.removeGroup(group) }
        memory.forget(id)
        // `offstage uninstall` returns once the app is gone; the reply waits for the delete above to be written.
        for responder in uninstallWaiters.removeValue(forKey: id) ?? [] { responder.reply() }
    }
}
