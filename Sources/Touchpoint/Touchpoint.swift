// The umbrella module: `import Touchpoint` is all an app needs.
@_exported import TouchpointCore
@_exported import TouchpointDelivery
@_exported import TouchpointEvents
@_exported import TouchpointPromo
@_exported import TouchpointRouting
@_exported import TouchpointStore
@_exported import TouchpointSurveys

#if canImport(SwiftUI)
// The seeds' SwiftUI views (`SurveyTriggerView`, `MoreAppsView`) come with `import Touchpoint`.
@_exported import TouchpointUI
#endif

// Only Touchpoint's own modules are re-exported (`ReexportTests`). The publishers are Combine's
// (OpenCombine's where Combine is missing: `import OpenCombineShim` there to `sink`).
