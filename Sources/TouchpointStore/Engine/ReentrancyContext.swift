#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Per-store state that only the thread inside the store (holding its lock while a live
/// expression computes, or running a transaction's block) touches, found through thread-locals.
///
/// A store call made from inside a live expression's `compute` cannot take the lock its own
/// thread already holds; it reads through ``reader`` instead, and writes are refused. A store call made
/// from inside a transaction's block goes to the transaction.
final class ReentrancyContext: @unchecked Sendable {
    // Safe: `reader` is set, called and cleared only by the thread that holds the store's state
    // lock, while a live expression computes (`holderKey` points here only on that thread);
    // `transaction` only by the thread running the transaction block (`transactionKey` points
    // here only on that thread).
    /// Reads the in-progress state by key path, while a live expression computes.
    @exclusivity(unchecked) var reader: ((String) -> StoreValue?)?
    @exclusivity(unchecked) var transaction: TransactionStore?

    private var marker: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Whether the current thread holds the store's state lock.
    var isHeldByCurrentThread: Bool { pthread_getspecific(Self.holderKey) == marker }

    /// Whether the current thread is running a transaction block of the store.
    var isInTransactionOnCurrentThread: Bool { pthread_getspecific(Self.transactionKey) == marker }

    func markHeld(_ held: Bool) { pthread_setspecific(Self.holderKey, held ? marker : nil) }

    func markInTransaction(_ inside: Bool) { pthread_setspecific(Self.transactionKey, inside ? marker : nil) }

    /// How deep in a cascade the current thread is: 0 normally, n while delivering a value
    /// produced by a change made n-1 deliveries deep.
    static var deliveryDepth: Int {
        get { Int(bitPattern: pthread_getspecific(depthKey)) }
        set { pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: newValue)) }
    }

    private static let holderKey = makeKey()
    private static let transactionKey = makeKey()
    private static let depthKey = makeKey()

    private static func makeKey() -> pthread_key_t {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }
}
