package benchrun.servlet;

import benchrun.common.Primes;
import benchrun.common.Stats;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The endpoints of stacks/CONTRACT.md in one servlet mapped to "/". Runs on the Tomcat request
 * thread (connector pool, max 200): the trial division of /compute and the blocking CouchDB
 * read of /docs/{id} included. A request is counted once its response body is ready, just
 * before it is written.
 */
final class AppServlet extends HttpServlet {
    private static final byte[] HELLO = "{\"message\":\"hello\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NOT_FOUND = "{\"error\":\"not found\"}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] BAD_N = ("{\"error\":\"parameter n must be an integer from 0 to "
            + Primes.MAX_N + "\"}").getBytes(StandardCharsets.UTF_8);
    private static final byte[] OK = "ok".getBytes(StandardCharsets.UTF_8);
    private static final String JSON = "application/json";

    private final transient Stats stats;
    private final transient Docs docs;

    AppServlet(Stats stats, Docs docs) {
        this.stats = stats;
        this.docs = docs;
    }

    /** GET and HEAD are served by path; any other method is "anything else": 404, under other. */
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws jakarta.servlet.ServletException, IOException {
        String method = req.getMethod();
        if ("GET".equals(method) || "HEAD".equals(method)) {
            super.service(req, resp);
        } else {
            stats.record(Stats.OTHER, req.getHeader(Stats.CELL_HEADER));
            send(resp, 404, JSON, NOT_FOUND);
        }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        // With the mapping "/" the servlet path is the whole (decoded, normalized) path.
        String path = req.getServletPath();
        if (req.getPathInfo() != null) {
            path += req.getPathInfo();
        }
        String tag = req.getHeader(Stats.CELL_HEADER);
        switch (path) {
            case "/hello" -> {
                stats.record(Stats.HELLO, tag);
                send(resp, 200, JSON, HELLO);
            }
            case "/compute" -> {
                long n = Primes.parseN(req.getParameter("n"));
                byte[] body = n < 0 ? BAD_N : ("{\"n\":" + n + ",\"primes\":" + Primes.countBelow(n) + "}")
                        .getBytes(StandardCharsets.UTF_8);
                stats.record(Stats.COMPUTE, tag);
                send(resp, n < 0 ? 400 : 200, JSON, body);
            }
            case "/healthz" -> send(resp, 200, "text/plain", OK);
            case "/stats" -> send(resp, 200, JSON, stats.toJson().getBytes(StandardCharsets.UTF_8));
            default -> {
                String id = path.startsWith("/docs/") ? path.substring("/docs/".length()) : "";
                if (!id.isEmpty() && id.indexOf('/') < 0) {
                    Docs.Result result = docs.get(id);
                    stats.record(Stats.DOCS, tag);
                    send(resp, result.status(), JSON, result.body());
                } else {
                    stats.record(Stats.OTHER, tag);
                    send(resp, 404, JSON, NOT_FOUND);
                }
            }
        }
    }

    private static void send(HttpServletResponse resp, int status, String type, byte[] body) throws IOException {
        resp.setStatus(status);
        resp.setContentType(type);
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }
}
