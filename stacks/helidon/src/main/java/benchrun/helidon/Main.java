package benchrun.helidon;

import benchrun.common.Primes;
import benchrun.common.Stats;
import benchrun.common.Strings;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.nio.charset.StandardCharsets;

/**
 * The benchrun "helidon" system under test: Helidon SE 4 WebServer ("Níma") with one routing
 * handler. Helidon 4's model: one virtual thread per request, blocking style; the trial
 * division of /compute runs on that virtual thread (carried by the JDK's ForkJoinPool, one
 * carrier per CPU). A request is counted once its response body is ready, just before it is sent.
 */
public final class Main {
    private static final byte[] HELLO = utf8("{\"message\":\"hello\"}");
    private static final byte[] NOT_FOUND = utf8("{\"error\":\"not found\"}");
    private static final byte[] BAD_N = utf8("{\"error\":\"parameter n must be an integer from 0 to " + Primes.MAX_N + "\"}");
    private static final byte[] BAD_S = utf8("{\"error\":\"s must be 1 to " + Strings.MAX_LEN + " printable ASCII characters\"}");
    private static final byte[] OK = utf8("ok");
    private static final String JSON = "application/json";
    private static final HeaderName CELL_HEADER = HeaderNames.create(Stats.CELL_HEADER);

    private static final Stats STATS = new Stats();

    private Main() {}

    public static void main(String[] args) {
        int port = parsePort(System.getenv("PORT"));
        WebServer server = WebServer.builder()
                .host("0.0.0.0")
                .port(port)
                .routing(routing -> routing.any(Main::handle))
                .build()
                .start();
        System.out.println("helidon listening on http://0.0.0.0:" + server.port());
    }

    static void handle(ServerRequest req, ServerResponse res) {
        String tag = req.headers().first(CELL_HEADER).orElse(null);
        Method method = req.prologue().method();
        String path = Method.GET.equals(method) || Method.HEAD.equals(method) ? req.path().path() : "";
        switch (path) {
            case "/hello" -> {
                STATS.record(Stats.HELLO, tag);
                send(res, Status.OK_200, JSON, HELLO);
            }
            case "/compute" -> {
                long n = Primes.parseN(req.query().first("n").orElse(null));
                byte[] body = n < 0 ? BAD_N : utf8("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}");
                STATS.record(Stats.COMPUTE, tag);
                send(res, n < 0 ? Status.BAD_REQUEST_400 : Status.OK_200, JSON, body);
            }
            case "/strings" -> {
                // Seed 4's string manipulation (benchrun.common.Strings), counted with /compute.
                String s = req.query().first("s").orElse(Strings.DEFAULT_INPUT);
                boolean ok = Strings.valid(s);
                byte[] body = ok ? utf8(Strings.answer(s)) : BAD_S;
                STATS.record(Stats.COMPUTE, tag);
                send(res, ok ? Status.OK_200 : Status.BAD_REQUEST_400, JSON, body);
            }
            case "/healthz" -> send(res, Status.OK_200, "text/plain", OK);
            case "/stats" -> send(res, Status.OK_200, JSON, utf8(STATS.toJson()));
            default -> {
                STATS.record(Stats.OTHER, tag);
                send(res, Status.NOT_FOUND_404, JSON, NOT_FOUND);
            }
        }
    }

    private static void send(ServerResponse res, Status status, String type, byte[] body) {
        res.status(status);
        res.header(HeaderNames.CONTENT_TYPE, type);
        res.send(body);
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
