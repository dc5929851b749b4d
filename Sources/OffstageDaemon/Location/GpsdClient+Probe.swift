extension GpsdClient {
    /// Whether something accepts TCP connections at `host`:`port` within `timeout` seconds: how the daemon decides,
    /// at start, whether gpsd is there to be the default location source.
    static func answers(host: String, port: Int, timeout: Double) -> Bool {
        // No stop is needed for a probe: a negative descriptor is ignored by poll(2).
        guard let socket = try? GpsdSocket.connect(host: host, port: port, timeout: timeout, wake: -1) else { return false }
        socket.close()
        return true
    }
}
