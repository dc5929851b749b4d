import Foundation
import Synchronization

/// A token bucket per key (here: per device token).
///
/// Each key starts with `burst` tokens; a request takes one; tokens come back at `ratePerSecond` up to `burst`.
public final class TokenBucketLimiter: Sendable {
    /// The shape of every bucket.
    public struct Limit: Sendable, Hashable {
        /// Tokens added per second.
        public var ratePerSecond: Double
        /// The most tokens a bucket holds (how many requests may come at once).
        public var burst: Double

        /// Creates a limit; the default allows 100 pushes a second per device token, 200 at once.
        public init(ratePerSecond: Double = 100, burst: Double = 200) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    private let limit: Limit
    private let maximumKeys: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    /// Creates a limiter; when it tracks more than `maximumKeys` keys it forgets the full (idle) buckets.
    public init(limit: Limit, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Takes a token from `key`'s bucket at `now`; false when the bucket is empty.
    public func take(_ key: String, now: Date) -> Bool {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: now)
            let elapsed = max(0, now.timeIntervalSince(bucket.updated))
            bucket.tokens = min(limit.burst, bucket.tokens + elapsed * limit.ratePerSecond)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets[key] == nil, buckets.count >= maximumKeys {
                let rate = limit.ratePerSecond
                let burst = limit.burst
                buckets = buckets.filter { $0.value.tokens + max(0, now.timeIntervalSince($0.value.updated)) * rate < burst }
            }
            buckets[key] = bucket
            return allowed
        }
    }
}
