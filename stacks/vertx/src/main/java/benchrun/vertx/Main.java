package benchrun.vertx;

import benchrun.common.Primes;
import benchrun.common.Stats;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;

/**
 * The benchrun "vertx" system under test: a Vert.x 5 verticle serving a vertx-web {@link Router}.
 * The verticle is deployed once per CPU (VERTX_INSTANCES overrides), Vert.x's documented way to
 * use every core: each instance has its own event loop and they share the listening port.
 * Handlers run on the event loop, the trial division of /compute included (no executeBlocking,
 * as a naive app does). A request is counted once its response body is ready, just before it is
 * written; the counters are shared by all instances.
 */
public final class Main extends VerticleBase {
    private static final byte[] HELLO = utf8("{\"message\":\"hello\"}");
    private static final byte[] NOT_FOUND = utf8("{\"error\":\"not found\"}");
    private static final byte[] BAD_N = utf8("{\"error\":\"parameter n must be an integer from 0 to " + Primes.MAX_N + "\"}");
    private static final byte[] OK = utf8("ok");
    private static final String JSON = "application/json";
    private static final Stats STATS = new Stats();

    private final int port;

    Main(int port) {
        this.port = port;
    }

    public static void main(String[] args) {
        int port = parsePort(System.getenv("PORT"));
        String raw = System.getenv("VERTX_INSTANCES");
        int instances = raw == null || raw.isBlank() ? Runtime.getRuntime().availableProcessors() : Integer.parseInt(raw.trim());
        Vertx vertx = Vertx.vertx();
        vertx.deployVerticle(() -> new Main(port), new DeploymentOptions().setInstances(instances))
                .onSuccess(id -> System.out.println("vertx listening on http://0.0.0.0:" + port + " with "
                        + instances + " verticle instance(s)"))
                .onFailure(e -> {
                    System.err.println("vertx: start failed: " + e);
                    System.exit(1);
                });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> vertx.close().await(), "shutdown"));
    }

    @Override
    public Future<?> start() {
        Router router = Router.router(vertx);
        router.route("/hello").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(ctx -> {
            STATS.record(Stats.HELLO, tag(ctx));
            send(ctx, 200, JSON, HELLO);
        });
        router.route("/compute").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(ctx -> {
            long n = Primes.parseN(ctx.request().getParam("n"));
            byte[] body = n < 0 ? BAD_N : utf8("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}");
            STATS.record(Stats.COMPUTE, tag(ctx));
            send(ctx, n < 0 ? 400 : 200, JSON, body);
        });
        router.route("/healthz").method(HttpMethod.GET).method(HttpMethod.HEAD)
                .handler(ctx -> send(ctx, 200, "text/plain", OK));
        router.route("/stats").method(HttpMethod.GET).method(HttpMethod.HEAD)
                .handler(ctx -> send(ctx, 200, JSON, utf8(STATS.toJson())));
        // Everything else, any method: 404, counted under "other".
        router.route().handler(ctx -> {
            STATS.record(Stats.OTHER, tag(ctx));
            send(ctx, 404, JSON, NOT_FOUND);
        });
        return vertx.createHttpServer().requestHandler(router).listen(port, "0.0.0.0");
    }

    private static String tag(RoutingContext ctx) {
        return ctx.request().getHeader(Stats.CELL_HEADER);
    }

    private static void send(RoutingContext ctx, int status, String type, byte[] body) {
        ctx.response()
                .setStatusCode(status)
                .putHeader("content-type", type)
                .end(Buffer.buffer(body));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static int parsePort(String raw) {
        if (raw == null || raw.isBlank()) {
            return 8080;
        }
        int port = Integer.parseInt(raw.trim());
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("PORT must be 1..65535, got " + raw);
        }
        return port;
    }
}
