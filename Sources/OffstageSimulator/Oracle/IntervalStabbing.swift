/// Maximum coverage of closed intervals on a line by `k` points, exactly, for every `k` at once.
///
/// Given intervals `[start, end]` (integers, `start ≤ end`), `covered(k)` is the largest number of intervals that
/// some `k` points together stab (an interval is stabbed if it holds at least one of the points).
///
/// **Why it is exact.** Write the problem as a linear program: `x_p ≥ 0` for each candidate point, `0 ≤ y_i ≤ 1` for
/// each interval, `y_i ≤ Σ_{p ∈ i} x_p`, `Σ x_p ≤ k`, maximise `Σ y_i`. With the candidates sorted, each interval's
/// row has consecutive ones in `x`, and so has the cardinality row: an interval matrix, totally unimodular; adding
/// the unit columns of `y` keeps it so. The program therefore has an integral optimum for every integral `k` —
/// `covered(k)` is its value — and the optimal value of a maximisation is concave in the right-hand side `k`.
/// Concavity makes the Lagrangian exact: for a penalty `λ`, the best of `stabbed − λ·points` over all point sets is
/// reached at every `k` whose marginal gain `covered(k) − covered(k−1)` is at least `λ` and at no other. Gains are
/// integers, so with `λ = m + ½` the optimum uses exactly `k*(m) = #{k : gain(k) > m}` points and its value gives
/// `covered(k*(m))`; between two such corners `covered` is linear with gain `m + 1`. The penalised problem is a
/// dynamic program over candidate points (the intervals' ends: any point can be moved right to the nearest end of
/// an interval it stabs without losing one). With chosen points `p_1 < … < p_r`, the point `p_j` newly stabs the
/// intervals with `p_{j−1} < start ≤ p_j ≤ end`, so
/// `best(j) = S(j) − λ + max(0, max_{i<j} best(i) − C(i, j))`, where `S(j)` counts intervals holding `p_j` and
/// `C(i, j)` those holding both. A segment tree keeps `best(i) − C(i, j)` for every `i` as `j` advances (an interval
/// ending before `p_j` adds one on the range of `i` it holds), so one penalty costs `O(n log n)`, and only the
/// penalties where the number of points changes are evaluated (at most `O(√n)` distinct gains).
public struct IntervalStabbing: Sendable {
    /// One interval, closed at both ends.
    public struct Interval: Hashable, Sendable {
        /// Its first point.
        public var start: Int64
        /// Its last point (`≥ start`).
        public var end: Int64

        /// Creates `[start, end]`; `end` must not be before `start`.
        public init(start: Int64, end: Int64) {
            precondition(start <= end, "an interval cannot end before it starts")
            self.start = start
            self.end = end
        }

        /// Whether `point` lies in the interval.
        public func contains(_ point: Int64) -> Bool { start <= point && point <= end }
    }

    /// The intervals.
    public let intervals: [Interval]
    /// `covered[k]`: the most intervals `k` points stab, for `k = 0 … minimumPoints`; beyond, every interval is
    /// stabbed.
    public let covered: [Int]
    /// For some `k` (the corners of the concave curve, where the gain changes, and `0` and `minimumPoints`): one
    /// optimal set of points, sorted.
    public let optimalPoints: [Int: [Int64]]

    /// The fewest points that stab every interval.
    public var minimumPoints: Int { covered.count - 1 }

    /// The most intervals `k` points stab (all of them once `k ≥ minimumPoints`).
    public func covered(points k: Int) -> Int { covered[max(0, min(k, covered.count - 1))] }

    /// Solves the problem for every `k`.
    public init(_ intervals: [Interval]) {
        self.intervals = intervals
        guard !intervals.isEmpty else {
            covered = [0]
            optimalPoints = [0: []]
            return
        }
        let solver = Solver(intervals)
        // k*(m) and covered(k*(m)) for penalties m + ½, evaluated where k* changes.
        var corners: [Int: (value: Int, points: [Int64])] = [0: (0, [])]
        var atPenalty: [Int: (count: Int, value: Int, points: [Int64])] = [:]
        func evaluate(_ m: Int) -> (count: Int, value: Int, points: [Int64]) {
            if let known = atPenalty[m] { return known }
            let (points, stabbed) = solver.solve(twiceLambda: 2 * m + 1)
            let result = (points.count, stabbed, points)
            atPenalty[m] = result
            corners[points.count] = (stabbed, points)
            return result
        }
        // Gains are at most the largest number of intervals holding one point.
        let maxGain = solver.maxDepth
        func explore(_ low: Int, _ high: Int) {
            let a = evaluate(low)
            let b = evaluate(high)
            guard high - low > 1, a.count != b.count else { return }
            let mid = (low + high) / 2
            explore(low, mid)
            explore(mid, high)
        }
        explore(0, maxGain)
        let total = evaluate(0)
        precondition(total.value == intervals.count, "at a penalty of ½ every interval is worth its point")
        // Fill in between corners: linear, with the integral gain of the segment.
        let ks = corners.keys.sorted()
        var values = [Int](repeating: 0, count: total.count + 1)
        for (k0, k1) in zip(ks, ks.dropFirst()) {
            let v0 = corners[k0]!.value
            let v1 = corners[k1]!.value
            let gain = (v1 - v0) / (k1 - k0)
            precondition(gain * (k1 - k0) == v1 - v0, "between corners the gain is one integer (concavity)")
            for k in k0...k1 { values[k] = v0 + gain * (k - k0) }
        }
        covered = values
        optimalPoints = corners.mapValues(\.points)
    }

    /// The penalised dynamic program.
    struct Solver {
        /// Candidate points: the distinct ends, sorted.
        let candidates: [Int64]
        /// Intervals sorted by end, as candidate index ranges `[first, last]` (`last` = the index of the end).
        let ranges: [(first: Int, last: Int)]
        /// `S(j)`: intervals holding candidate `j`.
        let depth: [Int]

        var maxDepth: Int { depth.max() ?? 0 }

        init(_ intervals: [Interval]) {
            let candidates = Array(Set(intervals.map(\.end))).sorted()
            self.candidates = candidates
            func firstAtOrAfter(_ value: Int64) -> Int {
                var low = 0
                var high = candidates.count
                while low < high {
                    let mid = (low + high) / 2
                    if candidates[mid] < value { low = mid + 1 } else { high = mid }
                }
                return low
            }
            let ranges = intervals.map { (first: firstAtOrAfter($0.start), last: firstAtOrAfter($0.end)) }
                .sorted { $0.last < $1.last }
            self.ranges = ranges
            var difference = [Int](repeating: 0, count: candidates.count + 1)
            for range in ranges {
                difference[range.first] += 1
                difference[range.last + 1] -= 1
            }
            var running = 0
            depth = candidates.indices.map { running += difference[$0]; return running }
        }

        /// The best point set for the penalty `twiceLambda / 2` per point, and how many intervals it stabs. Values are
        /// kept doubled so they stay integers; ties prefer fewer points.
        func solve(twiceLambda: Int) -> (points: [Int64], stabbed: Int) {
            let n = candidates.count
            var tree = MaxTree(count: n)
            var best = [Int](repeating: 0, count: n)  // doubled
            var previous = [Int](repeating: -1, count: n)
            var pointsUsed = [Int](repeating: 0, count: n)
            var stabbed = [Int](repeating: 0, count: n)
            var nextRange = 0
            for j in 0..<n {
                // Intervals ending before candidate j no longer hold it: for every i they hold, C(i, j) drops by one.
                while nextRange < ranges.count, ranges[nextRange].last < j {
                    let range = ranges[nextRange]
                    tree.add(2, from: range.first, through: range.last)
                    nextRange += 1
                }
                var base = 0
                var from = -1
                if j > 0, let (value, index) = tree.max(through: j - 1) {
                    // Continue a chain only if strictly better than starting one: on a tie, fewer points.
                    if value > 0 {
                        base = value
                        from = index
                    }
                }
                best[j] = 2 * depth[j] - twiceLambda + base
                previous[j] = from
                pointsUsed[j] = 1 + (from >= 0 ? pointsUsed[from] : 0)
                // Newly stabbed by j: S(j) − C(from, j), recovered from the doubled values.
                stabbed[j] = from >= 0 ? stabbed[from] + (base - best[from]) / 2 + depth[j] : depth[j]
                tree.set(j, to: best[j] - 2 * depth[j], points: pointsUsed[j])
            }
            var end = -1
            var top = 0
            for j in 0..<n where best[j] > top || (best[j] == top && end >= 0 && pointsUsed[j] < pointsUsed[end]) {
                top = best[j]
                end = j
            }
            var points: [Int64] = []
            var cursor = end
            while cursor >= 0 {
                points.append(candidates[cursor])
                cursor = previous[cursor]
            }
            return (points.reversed(), end >= 0 ? stabbed[end] : 0)
        }
    }

    /// A segment tree over `best(i) − C(i, j)` (doubled): range add, point set, prefix maximum with its index; among
    /// equal values the index whose chain uses fewer points.
    struct MaxTree {
        let size: Int
        var value: [Int]
        var index: [Int]
        var points: [Int]
        var lazy: [Int]
        static let none = Int.min / 4

        init(count: Int) {
            var size = 1
            while size < Swift.max(count, 1) { size *= 2 }
            self.size = size
            value = [Int](repeating: Self.none, count: 2 * size)
            index = [Int](repeating: -1, count: 2 * size)
            points = [Int](repeating: Int.max, count: 2 * size)
            lazy = [Int](repeating: 0, count: 2 * size)
        }

        private mutating func apply(_ node: Int, _ amount: Int) {
            if value[node] != Self.none { value[node] += amount }
            lazy[node] += amount
        }

        private mutating func push(_ node: Int) {
            if lazy[node] != 0 {
                apply(2 * node, lazy[node])
                apply(2 * node + 1, lazy[node])
                lazy[node] = 0
            }
        }

        private mutating func pull(_ node: Int) {
            let (l, r) = (2 * node, 2 * node + 1)
            let takeLeft = value[l] > value[r] || (value[l] == value[r] && points[l] <= points[r])
            let child = takeLeft ? l : r
            value[node] = value[child]
            index[node] = index[child]
            points[node] = points[child]
        }

        mutating func add(_ amount: Int, from first: Int, through last: Int) {
            add(amount, first, last, node: 1, low: 0, high: size - 1)
        }

        private mutating func add(_ amount: Int, _ first: Int, _ last: Int, node: Int, low: Int, high: Int) {
            if last < low || high < first { return }
            if first <= low && high <= last {
                apply(node, amount)
                return
            }
            push(node)
            let mid = (low + high) / 2
            add(amount, first, last, node: 2 * node, low: low, high: mid)
            add(amount, first, last, node: 2 * node + 1, low: mid + 1, high: high)
            pull(node)
        }

        mutating func set(_ position: Int, to newValue: Int, points used: Int) {
            set(position, newValue, used, node: 1, low: 0, high: size - 1)
        }

        private mutating func set(_ position: Int, _ newValue: Int, _ used: Int, node: Int, low: Int, high: Int) {
            if low == high {
                value[node] = newValue
                index[node] = position
                points[node] = used
                lazy[node] = 0
                return
            }
            push(node)
            let mid = (low + high) / 2
            if position <= mid {
                set(position, newValue, used, node: 2 * node, low: low, high: mid)
            } else {
                set(position, newValue, used, node: 2 * node + 1, low: mid + 1, high: high)
            }
            pull(node)
        }

        /// The maximum over positions `0…last` and where it is; nil if none was set.
        mutating func max(through last: Int) -> (Int, Int)? {
            let (v, i, _) = query(0, last, node: 1, low: 0, high: size - 1)
            return v == Self.none ? nil : (v, i)
        }

        private mutating func query(_ first: Int, _ last: Int, node: Int, low: Int, high: Int) -> (Int, Int, Int) {
            if last < low || high < first { return (Self.none, -1, Int.max) }
            if first <= low && high <= last { return (value[node], index[node], points[node]) }
            push(node)
            let mid = (low + high) / 2
            let a = query(first, last, node: 2 * node, low: low, high: mid)
            let b = query(first, last, node: 2 * node + 1, low: mid + 1, high: high)
            return a.0 > b.0 || (a.0 == b.0 && a.2 <= b.2) ? a : b
        }
    }
}
