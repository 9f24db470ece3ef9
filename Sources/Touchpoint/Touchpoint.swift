// The umbrella module: `import Touchpoint` is all an app needs.
@_exported import TouchpointCore
@_exported import TouchpointEvents
@_exported import TouchpointDelivery

#if !canImport(Combine)
// On Linux the Combine-style APIs (`AnyPublisher`, `sink`) come from OpenCombine.
@_exported import OpenCombineShim
#endif
