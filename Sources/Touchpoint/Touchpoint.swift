// The umbrella module: `import Touchpoint` is all an app needs.
@_exported import TouchpointCore
@_exported import TouchpointDelivery
@_exported import TouchpointEvents

#if !canImport(Combine)
// On Linux the Combine-style APIs (`AnyPublisher`, `sink`) come from OpenCombine.
@_exported import OpenCombineShim
#endif
