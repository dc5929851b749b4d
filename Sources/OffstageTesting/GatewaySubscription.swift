import OffstagePush

/// The gateway's Web Push subscription, named apart from the SDK's (`Offstage.WebPushSubscription`, what the app
/// receives) for the files that import both.
typealias GatewaySubscription = WebPushSubscription
