/// A kind of notification and the actions it offers (`UNNotificationCategory`), registered by the app.
public struct NotificationCategory: Hashable, Sendable, Codable {
    /// The name notifications refer to in their content's category identifier.
    public var identifier: String
    /// The buttons, in order.
    public var actions: [NotificationActionButton]

    /// Creates a category.
    public init(identifier: String, actions: [NotificationActionButton]) {
        self.identifier = identifier
        self.actions = actions
    }

    /// The most categories an app may register, and actions in one.
    public static let maximumCategories = 64
    /// The most actions one category may offer.
    public static let maximumActions = 10

    static func validate(_ categories: [NotificationCategory]) throws(CoreError) {
        guard categories.count <= maximumCategories else {
            throw CoreError(
                .invalidArgument, "\(categories.count) notification categories are more than \(maximumCategories)",
                fix: "register at most \(maximumCategories)")
        }
        var seen: Set<String> = []
        for category in categories {
            try NotificationRequest.validate(identifier: category.identifier)
            guard seen.insert(category.identifier).inserted else {
                throw CoreError(
                    .invalidArgument, "category \(QuotedText.quote(category.identifier)) is given twice",
                    fix: "give each category once")
            }
            guard category.actions.count <= maximumActions else {
                throw CoreError(
                    .invalidArgument, "category \(QuotedText.quote(category.identifier)) has more than \(maximumActions) actions",
                    fix: "offer at most \(maximumActions)")
            }
            var actions: Set<String> = []
            for action in category.actions {
                try NotificationRequest.validate(identifier: action.identifier)
                guard action.identifier != NotificationResponse.defaultAction,
                    action.identifier != NotificationResponse.dismissAction, actions.insert(action.identifier).inserted
                else {
                    throw CoreError(
                        .invalidArgument,
                        "action \(QuotedText.quote(action.identifier)) of category \(QuotedText.quote(category.identifier)) is reserved or given twice",
                        fix: "give each action its own identifier, other than `default` and `dismiss`")
                }
            }
        }
    }
}

/// One button of a category (`UNNotificationAction`).
public struct NotificationActionButton: Hashable, Sendable, Codable {
    /// What the app's response handler receives.
    public var identifier: String
    /// The label.
    public var title: String
    /// Opens the app in the foreground (`.foreground`); otherwise the app handles it in the background.
    public var foreground: Bool
    /// Shown as destructive (`.destructive`).
    public var destructive: Bool

    /// Creates an action.
    public init(identifier: String, title: String, foreground: Bool = false, destructive: Bool = false) {
        self.identifier = identifier
        self.title = title
        self.foreground = foreground
        self.destructive = destructive
    }
}
