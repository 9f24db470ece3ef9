/// Stands for one state of an index that changes rarely: the index replaces its token on every
/// change, so a cache filled under a token is still valid exactly while the index holds the same
/// token (`===`). An object rather than a counter, so tokens of different indexes never collide.
final class VersionToken: Sendable {}
