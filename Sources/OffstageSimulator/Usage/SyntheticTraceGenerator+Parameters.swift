import OffstageCore

extension SyntheticTraceGenerator {
    /// Everything that shapes a synthetic user. Each default is calibrated to a published figure where one could
    /// be checked, and is marked **assumption** where none could.
    ///
    /// Sources cited below:
    /// - Falaki, Mahajan, Kandula, Lymberopoulos, Govindan, Estrin. "Diversity in smartphone usage". MobiSys 2010:
    ///   255 users; users interact with the phone 10 to 200 times a day on average; the mean interaction lasts 10 to
    ///   250 s; users use 10 to 90 apps; close to 90 % of interactions involve one app; per-user app popularity
    ///   follows an exponential distribution.
    /// - Böhmer, Hecht, Schöning, Krüger, Bauer. "Falling asleep with Angry Birds, Facebook and Kindle: a large
    ///   scale study on mobile application usage". MobileHCI 2011: 4,100 users; an app session lasts 71.56 s on
    ///   average; users spend 59.23 min a day in apps; usage varies with the time of day.
    /// - Ferreira, Goncalves, Kostakos, Barkhuus, Dey. "Contextual experience sampling of mobile application
    ///   micro-usage". MobileHCI 2014: about 40 % of app launches last less than 15 s.
    /// - Geyer, Ellis, Shaw, Davidson. "Open-source smartphone app and tools for measuring, quantifying, and
    ///   visualizing technology use". Behavior Research Methods 2022: the sample shipped with their Usage Logger,
    ///   loaded here by ``UsageLoggerTrace`` (one user, 40 hours): used only for the shape of a screen session.
    public struct Parameters: Hashable, Sendable {
        /// The profile's name, used in the trace's name.
        public var name: String
        /// Midnight (UTC) of the first day; the synthetic user lives in UTC.
        public var start: Instant
        /// How many days to generate.
        public var days: Int
        /// How many apps the user opens. Falaki et al. 2010: 10 to 90 per user; 30 for the median profile is an
        /// **assumption** within that range.
        public var appCount: Int
        /// How the user's opens spread over the apps, most popular first.
        public var popularity: Popularity
        /// Screen-on sessions per day, glances included. Falaki et al. 2010: 10 to 200 interactions a day across
        /// users; 50 for the median profile is an **assumption** within that range (the Geyer et al. 2022 sample
        /// has 83 a day).
        public var screenSessionsPerDay: Double
        /// The share of screen sessions in which no app is opened (a look at the lock screen or a notification).
        /// 0.29: the Geyer et al. 2022 sample, all labels kept.
        public var glanceShare: Double
        /// Relative weights of each hour of the day (0 to 23) for when a screen session starts, before the night
        /// is cut out. **Assumption**: the numbers are ours; the shape (low in the early morning, rising through the
        /// day, highest in the evening) follows the time-of-day results of Böhmer et al. 2011.
        public var hourlyProfile: [Double]
        /// After each app in a screen session, the probability that the user opens another one. 0.1, so that 90 %
        /// of non-glance sessions use one app: Falaki et al. 2010 ("close to 90 %").
        public var anotherAppProbability: Double
        /// How long one app session lasts. Log-normal with median 22.1 s and σ = 1.533, the one log-normal that
        /// has both 40 % of sessions under 15 s (Ferreira et al. 2014) and a mean of 71.56 s (Böhmer et al. 2011);
        /// cut to 1 s … 1 h.
        public var appSessionLength: LogNormalDuration
        /// How long a glance keeps the screen on. Log-normal with median 3.4 s and σ = 0.97 (90th percentile
        /// 11.9 s): the Geyer et al. 2022 sample; cut to 1 … 60 s.
        public var glanceLength: LogNormalDuration
        /// From screen-on to the first app: 3 s, the median in the Geyer et al. 2022 sample (unlocking).
        public var unlockDelay: Duration
        /// Between two apps of one screen session (on the home screen). **Assumption**: 2 s.
        public var appSwitchGap: Duration
        /// From the end of the last app session to screen-off. 0: in the Geyer et al. 2022 sample the last app
        /// stays in the foreground until the screen goes off (median 0 s), so the app session includes it.
        public var screenOffDelay: Duration
        /// The share of non-glance screen sessions that start at one of their first app's habitual times of day
        /// (the rest start at random times following ``hourlyProfile``). **Assumption**: 0.4; it makes opens
        /// partly predictable, as a scheduler that learns habits expects.
        public var habitShare: Double
        /// Habitual times of day per app, drawn once per seed from ``hourlyProfile`` within waking hours.
        /// **Assumption**: 2.
        public var habitsPerApp: Int
        /// The standard deviation of a habitual open around its time of day. **Assumption**: 20 min.
        public var habitSpread: Duration
        /// When the user wakes, after midnight. **Assumption**: 07:00.
        public var wakeTime: Duration
        /// When the user goes to sleep, after midnight of the same day (more than 24 h means after the next
        /// midnight). **Assumption**: 23:30.
        public var bedTime: Duration
        /// The standard deviation of the wake and bed times from day to day. **Assumption**: 30 min.
        public var sleepJitter: Duration

        /// Creates parameters; every argument defaults to the median profile's value.
        public init(
            name: String = "median", start: Instant = Instant(secondsSinceEpoch: 1_767_571_200), days: Int = 14,
            appCount: Int = 30, popularity: Popularity = .exponential(rate: 0.35), screenSessionsPerDay: Double = 50,
            glanceShare: Double = 0.29, hourlyProfile: [Double] = Parameters.eveningPeakProfile,
            anotherAppProbability: Double = 0.1,
            appSessionLength: LogNormalDuration = .init(
                median: .seconds(double: 22.1), sigma: 1.533, minimum: .seconds(1), maximum: .seconds(3600)),
            glanceLength: LogNormalDuration = .init(
                median: .seconds(double: 3.4), sigma: 0.97, minimum: .seconds(1), maximum: .seconds(60)),
            unlockDelay: Duration = .seconds(3), appSwitchGap: Duration = .seconds(2), screenOffDelay: Duration = .zero,
            habitShare: Double = 0.4, habitsPerApp: Int = 2, habitSpread: Duration = .seconds(20 * 60),
            wakeTime: Duration = .seconds(7 * 3600), bedTime: Duration = .seconds(23 * 3600 + 1800),
            sleepJitter: Duration = .seconds(30 * 60)
        ) {
            self.name = name
            self.start = start
            self.days = days
            self.appCount = appCount
            self.popularity = popularity
            self.screenSessionsPerDay = screenSessionsPerDay
            self.glanceShare = glanceShare
            self.hourlyProfile = hourlyProfile
            self.anotherAppProbability = anotherAppProbability
            self.appSessionLength = appSessionLength
            self.glanceLength = glanceLength
            self.unlockDelay = unlockDelay
            self.appSwitchGap = appSwitchGap
            self.screenOffDelay = screenOffDelay
            self.habitShare = habitShare
            self.habitsPerApp = habitsPerApp
            self.habitSpread = habitSpread
            self.wakeTime = wakeTime
            self.bedTime = bedTime
            self.sleepJitter = sleepJitter
        }

        /// The default hourly profile (**assumption**, shaped after Böhmer et al. 2011): quiet at night and early
        /// morning, steady through the working day, highest from 18:00 to 22:00.
        public static let eveningPeakProfile: [Double] = [
            0.3, 0.2, 0.1, 0.1, 0.1, 0.2, 0.5, 0.9, 1.0, 1.0, 1.0, 1.0,
            1.1, 1.0, 1.0, 1.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.4, 1.2, 0.7,
        ]

        /// A light user: 20 screen sessions a day over 15 apps (**assumption**, near the low end of Falaki et al.
        /// 2010's 10–200 interactions and 10–90 apps); other parameters as the median profile.
        public static let light = Parameters(name: "light", appCount: 15, screenSessionsPerDay: 20)

        /// The median user: the defaults.
        public static let median = Parameters()

        /// A heavy user: 120 screen sessions a day over 60 apps, with a flatter popularity (**assumption**, in the
        /// upper part of Falaki et al. 2010's ranges).
        public static let heavy = Parameters(
            name: "heavy", appCount: 60, popularity: .exponential(rate: 0.2), screenSessionsPerDay: 120)
    }

    /// How opens spread over apps ranked by popularity.
    public enum Popularity: Hashable, Sendable {
        /// The app of rank `r` (from 0) has weight `exp(−rate × r)`: Falaki et al. 2010 found per-user app
        /// popularity exponential. The rate is an **assumption** (0.35 gives the top app 30 % of opens among 30).
        case exponential(rate: Double)
        /// The app of rank `r` (from 0) has weight `1 / (r + 1)^exponent`.
        case zipf(exponent: Double)

        /// The normalised share of each of `count` apps, most popular first.
        public func shares(count: Int) -> [Double] {
            let weights = (0..<count).map { rank -> Double in
                switch self {
                case .exponential(let rate): SeededGenerator.exponential(-rate * Double(rank))
                case .zipf(let exponent):
                    1 / SeededGenerator.exponential(exponent * SeededGenerator.naturalLog(Double(rank + 1)))
                }
            }
            let total = weights.reduce(0, +)
            return weights.map { $0 / total }
        }
    }

    /// A log-normal distribution of durations, cut to `[minimum, maximum]`.
    public struct LogNormalDuration: Hashable, Sendable {
        /// The median (e^μ) before cutting.
        public var median: Duration
        /// σ of the underlying normal distribution.
        public var sigma: Double
        /// Shorter draws are raised to this.
        public var minimum: Duration
        /// Longer draws are lowered to this.
        public var maximum: Duration

        /// Creates the distribution.
        public init(median: Duration, sigma: Double, minimum: Duration, maximum: Duration) {
            self.median = median
            self.sigma = sigma
            self.minimum = minimum
            self.maximum = maximum
        }

        /// One draw, to the millisecond.
        public func draw(using random: inout SeededGenerator) -> Duration {
            let seconds = random.logNormal(mu: SeededGenerator.naturalLog(median.inSeconds), sigma: sigma)
            let milliseconds = Int64((seconds * 1000).rounded())
            return min(max(.milliseconds(milliseconds), minimum), maximum)
        }
    }
}
