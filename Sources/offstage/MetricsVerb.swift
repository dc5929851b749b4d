import ArgumentParser
import Foundation
import OffstageProtocol

struct Metrics: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what the daemon counts: wake-ups, freezes, callbacks and their latency, calls, store writes.",
        discussion: """
            Prints the Prometheus text format, as a scraper reads it from the daemon's `metricsListen` address. \
            With --json: an array of samples, each {"name", "labels", "value"}, in the order the text lists them \
            (a histogram is its _bucket, _sum and _count samples). Durations are in seconds.
            """)
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ControlInterface.Method.metrics, NoParameters(), as: ControlInterface.MetricsReply.self)
        // `print` ends the text with its own newline.
        let text = reply.text.hasSuffix("\n") ? String(reply.text.dropLast()) : reply.text
        try client.output(MetricSample.parse(reply.text), text: text)
    }
}

/// One line of the Prometheus text format: a metric name, its labels and its value.
struct MetricSample: Codable, Hashable {
    var name: String
    var labels: [String: String]
    var value: Double

    /// The samples of `text`; comment lines (`# HELP`, `# TYPE`) and blank lines are skipped.
    static func parse(_ text: String) throws -> [MetricSample] {
        try text.split(separator: "\n").filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { try parse(line: $0) }
    }

    static func parse(line: Substring) throws -> MetricSample {
        var rest = line[...]
        let name = rest.prefix { $0 != "{" && $0 != " " }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while let first = rest.first, first != "}" {
                if first == "," || first == " " {
                    rest = rest.dropFirst()
                    continue
                }
                let key = rest.prefix { $0 != "=" }
                rest = rest.dropFirst(key.count)
                guard rest.hasPrefix("=\"") else { throw MalformedMetrics(line: String(line)) }
                rest = rest.dropFirst(2)
                // Label values escape backslash, double quote and newline.
                var value = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character == "n" ? "\n" : character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                labels[String(key)] = value
            }
            guard rest.first == "}" else { throw MalformedMetrics(line: String(line)) }
            rest = rest.dropFirst()
        }
        let fields = rest.split(separator: " ")
        guard !name.isEmpty, let text = fields.first, let value = Double(text) ?? special(text) else {
            throw MalformedMetrics(line: String(line))
        }
        return MetricSample(name: String(name), labels: labels, value: value)
    }

    private static func special(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: nil
        }
    }
}

/// The daemon's text could not be read as the Prometheus text format.
struct MalformedMetrics: Error, CustomStringConvertible {
    let line: String
    var description: String { "the daemon's metrics have a line that is not a sample: \(line)" }
}
