package benchrun.undertow;

import benchrun.common.Primes;
import benchrun.common.Stats;

import io.undertow.Undertow;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.undertow.util.HttpString;
import io.undertow.util.Methods;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Deque;

/**
 * The benchrun "undertow" system under test: one Undertow core {@link HttpHandler}, no servlet
 * layer. Undertow's defaults: XNIO I/O threads = max(CPUs, 2), a worker pool of 8 per I/O thread
 * (unused here). The handler is not dispatched to the worker pool, as Undertow's own hello-world
 * does: every request, the trial division of /compute included, runs on the I/O thread that read
 * it. A request is counted once its response body is ready, just before it is sent.
 */
public final class Main implements HttpHandler {
    private static final ByteBuffer HELLO = bytes("{\"message\":\"hello\"}");
    private static final ByteBuffer NOT_FOUND = bytes("{\"error\":\"not found\"}");
    private static final ByteBuffer BAD_N = bytes("{\"error\":\"parameter n must be an integer from 0 to " + Primes.MAX_N + "\"}");
    private static final ByteBuffer OK = bytes("ok");
    private static final String JSON = "application/json";
    private static final HttpString CELL_HEADER = HttpString.tryFromString(Stats.CELL_HEADER);

    private final Stats stats = new Stats();

    public static void main(String[] args) {
        int port = parsePort(System.getenv("PORT"));
        Undertow server = Undertow.builder()
                .addHttpListener(port, "0.0.0.0")
                .setHandler(new Main())
                .build();
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "shutdown"));
        System.out.println("undertow listening on http://0.0.0.0:" + port + " with "
                + Math.max(Runtime.getRuntime().availableProcessors(), 2) + " I/O threads");
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) {
        String tag = exchange.getRequestHeaders().getFirst(CELL_HEADER);
        HttpString method = exchange.getRequestMethod();
        String path = Methods.GET.equals(method) || Methods.HEAD.equals(method) ? exchange.getRequestPath() : "";
        switch (path) {
            case "/hello" -> {
                stats.record(Stats.HELLO, tag);
                send(exchange, 200, JSON, HELLO.duplicate());
            }
            case "/compute" -> {
                Deque<String> values = exchange.getQueryParameters().get("n");
                long n = Primes.parseN(values == null ? null : values.peekFirst());
                ByteBuffer body = n < 0 ? BAD_N.duplicate()
                        : bytes("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}");
                stats.record(Stats.COMPUTE, tag);
                send(exchange, n < 0 ? 400 : 200, JSON, body);
            }
            case "/healthz" -> send(exchange, 200, "text/plain", OK.duplicate());
            case "/stats" -> send(exchange, 200, JSON, bytes(stats.toJson()));
            default -> {
                stats.record(Stats.OTHER, tag);
                send(exchange, 404, JSON, NOT_FOUND.duplicate());
            }
        }
    }

    private static void send(HttpServerExchange exchange, int status, String type, ByteBuffer body) {
        exchange.setStatusCode(status);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, type);
        exchange.getResponseHeaders().put(Headers.CONTENT_LENGTH, body.remaining());
        exchange.getResponseSender().send(body);
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
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
