import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

/// `offstage notifications …`: the apps' local notifications, as the user sees them — pending and delivered — and
/// what the user does with them: tap, choose an action, dismiss, clear (SPEC NT-2, CLI-1, CLI-2).
struct NotificationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "List the apps' pending and delivered notifications; tap one, choose its action, or clear them.",
        discussion: """
            `offstage notifications [APP_ID]` lists (the list verb is the default); `tap` acts as the user on a \
            delivered notification; `clear` removes delivered ones.
            """,
        subcommands: [NotificationsList.self, NotificationTap.self, NotificationClear.self],
        defaultSubcommand: NotificationsList.self)
}

struct NotificationsList: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List pending notifications (soonest first) and delivered ones (oldest first), with badges.",
        discussion: """
            Pending: when each is due and its trigger in words. Delivered: when, and where it went — to the user \
            (the delivered list, and the desktop's notifications) or to the app in front (waiting for its answer). \
            With --json, the reply as it is: {"pending": [...], "delivered": [...], "badges": [...], "timeZone": ...}.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?

    func validate() throws {
        if app?.isEmpty == true {
            throw ValidationError("APP_ID is empty; give an app's id, or leave it out for every app")
        }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            NotificationsControlInterface.Method.notifications,
            NotificationsControlInterface.NotificationsParameters(app: app),
            as: NotificationsControlInterface.NotificationsReply.self)
        try client.output(reply, text: Table.notifications(reply, app: app))
    }
}

struct NotificationTap: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "tap",
        abstract: "Tap an app's delivered notification, or choose one of its actions, as the user would.",
        discussion: """
            A tap (or --action default) opens the app — launching it with reason notification if it is not running — \
            and its delegate hears the response. --action dismiss only removes the notification (a running app hears \
            it). An action of the notification's category opens the app or wakes it in the background, as the \
            action says. The notification leaves the delivered list. Opening needs the device unlocked.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(
        help: ArgumentHelp(
            "The delivered notification's identifier (see `offstage notifications`).", valueName: "IDENTIFIER"))
    var identifier: String
    @Option(
        help: ArgumentHelp("default (a tap, the default), dismiss, or an action of its category.", valueName: "ACTION"))
    var action: String?

    func validate() throws {
        if app.isEmpty { throw ValidationError("APP_ID is empty; give the app's id, as `offstage apps` lists it") }
        if identifier.isEmpty {
            throw ValidationError(
                "IDENTIFIER is empty; give a delivered notification's identifier from `offstage notifications`")
        }
        if action?.isEmpty == true {
            throw ValidationError(
                "--action is empty; give default, dismiss, or an action identifier of the notification's category")
        }
    }

    func run(with client: ControlClient) throws {
        _ = try client.call(
            NotificationsControlInterface.Method.tap,
            NotificationsControlInterface.TapParameters(app: app, identifier: identifier, action: action))
        let chosen = action ?? "default"
        try client.output(
            ["app": app, "identifier": identifier, "action": chosen],
            text: Table.tapped(app: app, identifier: identifier, action: chosen))
    }
}

struct NotificationClear: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Remove delivered notifications: these of an app, all of an app's, or every app's.",
        discussion: "As the user clearing them from the list: the apps hear nothing. Prints how many were removed.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?
    @Option(
        name: .customLong("identifier"),
        help: ArgumentHelp(
            "Only the delivered notification with this identifier (repeatable; needs APP_ID).", valueName: "ID"))
    var identifiers: [String] = []

    func validate() throws {
        if app?.isEmpty == true {
            throw ValidationError("APP_ID is empty; give an app's id, or leave it out for every app")
        }
        if app == nil, !identifiers.isEmpty {
            throw ValidationError(
                "--identifier needs APP_ID: identifiers belong to an app; write "
                    + "`offstage notifications clear APP_ID --identifier ID`")
        }
        if identifiers.contains("") {
            throw ValidationError("--identifier is empty; give a delivered notification's identifier")
        }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            NotificationsControlInterface.Method.clear,
            NotificationsControlInterface.ClearParameters(
                app: app, identifiers: identifiers.isEmpty ? nil : identifiers),
            as: NotificationsControlInterface.ClearReply.self)
        try client.output(reply, text: Table.cleared(reply.removed, app: app))
    }
}
