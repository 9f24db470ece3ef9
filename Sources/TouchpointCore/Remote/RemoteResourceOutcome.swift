/// What one refresh of a ``RemoteResource`` ended with.
public enum RemoteResourceOutcome: Sendable, Hashable {
    /// The server sent a new body (`200`) that decoded and validated; it is now the value and
    /// the cache.
    case fromNetwork
    /// The server answered `304 Not Modified` to `If-None-Match`: the held value is current.
    case notModified
    /// The held value is younger than the cache TTL, so no request was made.
    case fromFreshCache
    /// The request failed (or failures are cooling down and none was made): the last good
    /// value, from memory or the disk cache, is kept. ``RemoteResourceSnapshot/lastError`` says why.
    case fromStaleCache
    /// The request failed (or failures are cooling down) and there is no value at all.
    /// ``RemoteResourceSnapshot/lastError`` says why.
    case noValue
}
