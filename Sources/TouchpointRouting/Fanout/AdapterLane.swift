import Foundation
import Logging
import TouchpointEvents

/// One adapter and the thread that calls it: configure first, then every item in log order.
final class AdapterLane: @unchecked Sendable {
    // Safe: `adapter` is used only by this lane's thread (and, before that thread starts, by
    // `GlobalTracker.startTracking`, which received it as `sending`, so the caller kept no
    // access). `Thread.start()` orders the two.
    private let adapter: any AnalyticsAdapter
    let index: Int
    let name: String
    private let hub: DeliveryHub
    private let log: TrackerLog

    init(adapter: any AnalyticsAdapter, name: String, index: Int, hub: DeliveryHub, log: TrackerLog) {
        self.adapter = adapter
        self.name = name
        self.index = index
        self.hub = hub
        self.log = log
    }

    /// Starts the lane's thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "touchpoint.routing.\(name)"
        thread.qualityOfService = .utility
        thread.start()
    }

    private func run() {
        do {
            try adapter.configure()
            hub.configured(lane: index, succeeded: true)
        } catch {
            log.problem(TrackerLog.configureFailed(adapter: name, error: error), severity: .error)
            hub.configured(lane: index, succeeded: false)
            return
        }
        var counts: DeliveryHub.BatchCounts?
        while let batch = hub.nextBatch(lane: index, finishing: counts) {
            let settings = log.current
            var batchCounts = DeliveryHub.BatchCounts()
            for item in batch {
                deliver(item, settings, &batchCounts)
            }
            counts = batchCounts
        }
    }

    private func deliver(_ item: DeliveryItem, _ settings: TrackerLog.Settings, _ counts: inout DeliveryHub.BatchCounts)
    {
        switch item {
        case .event(let recorded, let box):
            let event = box?.event ?? RecordedEvent(recorded)
            if let rule = adapter.eventTrackingRule, !rule.allows(event) {
                counts.skippedByRule += 1
                return
            }
            announce(settings) { TrackerLog.eventTriggered(adapter: name, event: recorded, level: $0) }
            counts.delivered += 1
            do {
                try adapter.track(event: event)
            } catch {
                counts.failed += 1
                log.problem(TrackerLog.eventFailed(adapter: name, name: recorded.name, error: error), severity: .error)
            }
        case .property(let recorded, let box):
            let value = recorded.properties[box.property.identifier] ?? .null
            deliver(box.property, value: value, settings, &counts)
        case .traits(let recorded):
            for key in recorded.properties.keys.sorted() {
                let value = recorded.properties[key]!
                let property = RecordedProperty(identifier: key, value: value, event: recorded)
                deliver(property, value: value, settings, &counts)
            }
        case .reset:
            announce(settings) { _ in TrackerLog.reset(adapter: name) }
            do {
                try adapter.reset()
            } catch {
                counts.failed += 1
                log.problem(TrackerLog.resetFailed(adapter: name, error: error), severity: .error)
            }
        }
    }

    private func deliver(
        _ property: any TrackableProperty, value: EventValue, _ settings: TrackerLog.Settings,
        _ counts: inout DeliveryHub.BatchCounts
    ) {
        if let rule = adapter.propertyTrackingRule, !rule.allows(property) {
            counts.skippedByRule += 1
            return
        }
        let identifier = property.identifier
        announce(settings) {
            TrackerLog.propertyUpdated(adapter: name, identifier: identifier, value: value, level: $0)
        }
        counts.delivered += 1
        do {
            try adapter.track(property: property)
        } catch {
            counts.failed += 1
            log.problem(
                TrackerLog.propertyFailed(adapter: name, identifier: identifier, error: error), severity: .error)
        }
    }

    /// Sends a delivery line to the handler (at its level) and to swift-log at debug.
    private func announce(_ settings: TrackerLog.Settings, _ message: (GlobalTracker.LoggingLevel) -> String) {
        if settings.level > .none {
            let text = message(settings.level)
            settings.handler(text)
            log.logger.debug("\(text)")
        } else if log.logger.logLevel <= .debug {
            log.logger.debug("\(message(.verbose))")
        }
    }
}
