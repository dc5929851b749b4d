import OffstageCore

/// The core's push type, named apart from the gateway's (`OffstagePush.PushType`) for the files that import both.
typealias CorePushType = PushType
