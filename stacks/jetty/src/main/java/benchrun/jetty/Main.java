package benchrun.jetty;

import benchrun.common.Primes;
import benchrun.common.Stats;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

/**
 * The benchrun "jetty" system under test: one Jetty 12 core {@link Handler} (no servlet layer).
 * Jetty's defaults: a QueuedThreadPool of at most 200 threads that also runs the selectors; the
 * handler is a plain (blocking-type) {@link Handler.Abstract}, so Jetty calls it on a pool
 * thread, where the trial division of /compute runs too. A request is counted once its response
 * body is ready, just before it is written.
 */
public final class Main extends Handler.Abstract {
    private static final ByteBuffer HELLO = bytes("{\"message\":\"hello\"}");
    private static final ByteBuffer NOT_FOUND = bytes("{\"error\":\"not found\"}");
    private static final ByteBuffer BAD_N = bytes("{\"error\":\"parameter n must be an integer from 0 to " + Primes.MAX_N + "\"}");
    private static final ByteBuffer OK = bytes("ok");
    private static final String JSON = "application/json";

    private final Stats stats = new Stats();

    public static void main(String[] args) throws Exception {
        int port = parsePort(System.getenv("PORT"));
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("0.0.0.0");
        connector.setPort(port);
        server.addConnector(connector);
        server.setHandler(new Main());
        server.setStopAtShutdown(true);
        server.start();
        System.out.println("jetty " + Server.getVersion() + " listening on http://0.0.0.0:" + port);
        server.join();
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String tag = request.getHeaders().get(Stats.CELL_HEADER);
        String method = request.getMethod();
        String path = "GET".equals(method) || "HEAD".equals(method) ? Request.getPathInContext(request) : "";
        switch (path) {
            case "/hello" -> {
                stats.record(Stats.HELLO, tag);
                send(response, callback, 200, JSON, HELLO.slice());
            }
            case "/compute" -> {
                Fields query = Request.extractQueryParameters(request);
                long n = Primes.parseN(query.getValue("n"));
                ByteBuffer body = n < 0 ? BAD_N.slice()
                        : bytes("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}");
                stats.record(Stats.COMPUTE, tag);
                send(response, callback, n < 0 ? 400 : 200, JSON, body);
            }
            case "/healthz" -> send(response, callback, 200, "text/plain", OK.slice());
            case "/stats" -> send(response, callback, 200, JSON, bytes(stats.toJson()));
            default -> {
                stats.record(Stats.OTHER, tag);
                send(response, callback, 404, JSON, NOT_FOUND.slice());
            }
        }
        return true;
    }

    private static void send(Response response, Callback callback, int status, String type, ByteBuffer body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.remaining());
        response.write(true, body, callback);
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
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
