import Hummingbird

/// Builds the collector's router: its own routes, then the extra ones.
enum CollectorRouter {
    static func make(services: CollectorServices, extraRoutes: [CollectorRoutes]) -> Router<CollectorRequestContext> {
        let router = Router(context: CollectorRequestContext.self)
        // Outermost, so every answer on a browser route carries its CORS headers, errors included.
        router.add(middleware: CORSMiddleware(policy: services.cors))
        router.add(middleware: CollectorMiddleware(metrics: services.metrics))
        IngestRoutes.register(on: router, services: services)
        SettingsRoutes.register(on: router, services: services)
        ConfigRoutes.register(on: router, services: services)
        ScenarioRoutes.register(on: router, services: services)
        QueryRoutes.register(on: router, services: services)
        OperationsRoutes.register(on: router, services: services)
        DashboardRoutes.register(on: router, services: services)
        for routes in extraRoutes { routes.register(router, services) }
        return router
    }
}
