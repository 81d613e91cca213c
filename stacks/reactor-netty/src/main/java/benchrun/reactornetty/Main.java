package benchrun.reactornetty;

import benchrun.common.Primes;
import benchrun.common.Stats;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The benchrun "reactor-netty" system under test: a bare Reactor Netty {@link HttpServer} with
 * one handler. Reactor Netty's defaults: native epoll when available, event-loop threads =
 * max(CPUs, 4). Every request, the trial division of /compute included, runs on the event loop
 * that read it (no publishOn / subscribeOn offload). A request is counted once its response
 * body is ready, just before it is sent.
 */
public final class Main {
    private static final byte[] HELLO = utf8("{\"message\":\"hello\"}");
    private static final byte[] NOT_FOUND = utf8("{\"error\":\"not found\"}");
    private static final byte[] BAD_N = utf8("{\"error\":\"parameter n must be an integer from 0 to " + Primes.MAX_N + "\"}");
    private static final byte[] OK = utf8("ok");
    private static final String JSON = "application/json";

    private static final Stats STATS = new Stats();

    private Main() {}

    public static void main(String[] args) {
        int port = parsePort(System.getenv("PORT"));
        DisposableServer server = HttpServer.create()
                .host("0.0.0.0")
                .port(port)
                .handle(Main::handle)
                .bindNow();
        Runtime.getRuntime().addShutdownHook(new Thread(server::disposeNow, "shutdown"));
        System.out.println("reactor-netty listening on http://0.0.0.0:" + port);
        server.onDispose().block();
    }

    static Publisher<Void> handle(HttpServerRequest req, HttpServerResponse res) {
        String tag = req.requestHeaders().get(Stats.CELL_HEADER);
        HttpMethod method = req.method();
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)
                ? (q < 0 ? uri : uri.substring(0, q)) : "";
        switch (path) {
            case "/hello":
                STATS.record(Stats.HELLO, tag);
                return send(res, 200, JSON, HELLO);
            case "/compute": {
                List<String> values = new QueryStringDecoder(uri).parameters().get("n");
                long n = Primes.parseN(values == null || values.isEmpty() ? null : values.get(0));
                byte[] body = n < 0 ? BAD_N : utf8("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}");
                STATS.record(Stats.COMPUTE, tag);
                return send(res, n < 0 ? 400 : 200, JSON, body);
            }
            case "/healthz":
                return send(res, 200, "text/plain", OK);
            case "/stats":
                return send(res, 200, JSON, utf8(STATS.toJson()));
            default:
                STATS.record(Stats.OTHER, tag);
                return send(res, 404, JSON, NOT_FOUND);
        }
    }

    private static Publisher<Void> send(HttpServerResponse res, int status, String type, byte[] body) {
        return res.status(HttpResponseStatus.valueOf(status))
                .header(HttpHeaderNames.CONTENT_TYPE, type)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length))
                .sendByteArray(Mono.just(body));
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
