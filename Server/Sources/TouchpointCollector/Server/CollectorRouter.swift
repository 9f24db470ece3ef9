import Hummingbird

/// Builds the collector's router: its own routes, then the extra ones.
enum CollectorRouter {
    static func make(services: CollectorServices, extraRoutes: [CollectorRoutes]) -> Router<CollectorRequestContext> {
        build(services: services, extraRoutes: extraRoutes).router
    }

    /// The router and every route the collector itself added, with its access (the extra routes
    /// are the embedder's and check access themselves).
    static func build(
        services: CollectorServices, extraRoutes: [CollectorRoutes]
    ) -> (router: Router<CollectorRequestContext>, routes: [CollectorRoute]) {
        let router = Router(context: CollectorRequestContext.self)
        // Outermost, so every answer on a browser route carries its CORS headers, errors included.
        router.add(middleware: CORSPolicyMiddleware(policy: services.cors))
        router.add(middleware: CollectorMiddleware(metrics: services.metrics))
        let table = CollectorRouteTable(router: router, services: services)
        IngestRoutes.register(on: table, services: services)
        SettingsRoutes.register(on: table, services: services)
        ConfigRoutes.register(on: table, services: services)
        ScenarioRoutes.register(on: table, services: services)
        QueryRoutes.register(on: table, services: services)
        AnalyticsRoutes.register(on: table, services: services)
        SavedRoutes.register(on: table, services: services)
        DeletionRoutes.register(on: table, services: services)
        OperationsRoutes.register(on: table, services: services)
        DashboardRoutes.register(on: table, services: services)
        for routes in extraRoutes { routes.register(router, services) }
        return (router, table.routes)
    }
}
