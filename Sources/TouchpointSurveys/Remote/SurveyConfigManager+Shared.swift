import TouchpointCore

extension SurveyConfigManager {
    private static let sharedManager = Locked<SurveyConfigManager?>(nil)

    /// The manager a `SurveyTriggerView` made without a config or manager reads: the one the setup
    /// call `TouchpointSDK.start(writeKey:collector:)` made (fetching the collector's
    /// `/v1/config/surveys`), or one you set. Nil until then. Safe to read and write from any thread.
    public static var shared: SurveyConfigManager? {
        get { sharedManager.value }
        set { sharedManager.withLock { $0 = newValue } }
    }
}
