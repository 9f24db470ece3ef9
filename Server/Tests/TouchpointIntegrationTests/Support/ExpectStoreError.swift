import Testing
import TouchpointStore

/// Runs `operation`, which must throw a ``StoreError`` with `code`, and returns that error.
func expectStoreError<T>(
    _ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: () async throws -> T
) async -> StoreError? {
    do {
        let value = try await operation()
        Issue.record("expected a \(code) error, got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
