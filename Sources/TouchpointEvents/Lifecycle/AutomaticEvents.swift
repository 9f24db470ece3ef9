/// The events Touchpoint records by itself, by Segment's names and properties, so every Segment
/// destination and the collector's insights read them.
///
/// | event | when | properties |
/// | --- | --- | --- |
/// | `Application Installed` | the first launch | `version`, `build` |
/// | `Application Updated` | the first launch of another version or build | `version`, `build`, `previous_version`, `previous_build` |
/// | `Application Opened` | each launch, and each return from the background | `from_background`, `version`, `build`; `url` and `referring_application` when opened by a link |
/// | `Application Backgrounded` | each move to the background | none |
///
/// All are on by default (``all``); `TouchpointSDK.Options.automaticEvents` switches each off.
public struct AutomaticEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `Application Installed`.
    public static let applicationInstalled = AutomaticEvents(rawValue: 1 << 0)
    /// `Application Updated`.
    public static let applicationUpdated = AutomaticEvents(rawValue: 1 << 1)
    /// `Application Opened`.
    public static let applicationOpened = AutomaticEvents(rawValue: 1 << 2)
    /// `Application Backgrounded`.
    public static let applicationBackgrounded = AutomaticEvents(rawValue: 1 << 3)

    /// Every automatic event.
    public static let all: AutomaticEvents = [
        .applicationInstalled, .applicationUpdated, .applicationOpened, .applicationBackgrounded,
    ]
}
