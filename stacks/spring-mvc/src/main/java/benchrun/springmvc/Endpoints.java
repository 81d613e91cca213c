package benchrun.springmvc;

import benchrun.common.Primes;
import benchrun.common.Stats;

import java.util.Map;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The endpoints of stacks/CONTRACT.md, as a plain blocking controller: every handler, the
 * trial division of /compute and the MongoDB read of /items included, runs on the Tomcat
 * request thread that took the request (Boot's default pool, up to 200 threads; set
 * {@code SERVER_TOMCAT_THREADS_MAX}, {@code SERVER_TOMCAT_ACCEPT_COUNT} — the listen backlog —
 * or {@code SERVER_TOMCAT_MAX_CONNECTIONS} in the environment to change them).
 * A request is counted by its handler once the response is built.
 */
@RestController
class Endpoints {
    record Message(String message) {}

    record Computed(long n, long primes) {}

    record Failure(String error) {}

    private static final Message HELLO = new Message("hello");
    private static final Failure NOT_FOUND = new Failure("not found");

    private final Stats stats = new Stats();
    private final Items items;

    Endpoints(
            Items items,
            @Value("${server.tomcat.threads.max:200}") int maxThreads,
            @Value("${server.tomcat.accept-count:100}") int acceptCount,
            @Value("${server.tomcat.max-connections:8192}") int maxConnections) {
        this.items = items;
        // What Tomcat was sized by (SERVER_TOMCAT_THREADS_MAX, SERVER_TOMCAT_ACCEPT_COUNT and
        // SERVER_TOMCAT_MAX_CONNECTIONS in a target's env set them), reported under /stats runtime.
        stats.describe("maxThreads", maxThreads);
        stats.describe("acceptCount", acceptCount);
        stats.describe("maxConnections", maxConnections);
    }

    @GetMapping("/hello")
    ResponseEntity<Message> hello(@RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        stats.record(Stats.HELLO, tag);
        return ResponseEntity.ok(HELLO);
    }

    @GetMapping("/compute")
    ResponseEntity<?> compute(
            @RequestParam(value = "n", required = false) String rawN,
            @RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        long n = Primes.parseN(rawN);
        ResponseEntity<?> response = n < 0
                ? ResponseEntity.badRequest().body(new Failure(
                        "parameter n must be an integer from 0 to " + Primes.MAX_N))
                : ResponseEntity.ok(new Computed(n, Primes.countBelow(n)));
        stats.record(Stats.COMPUTE, tag);
        return response;
    }

    @GetMapping("/items")
    ResponseEntity<?> items(
            @RequestParam(value = "limit", required = false) String rawLimit,
            @RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        long limit = rawLimit == null ? Items.DEFAULT_LIMIT : Primes.parseBounded(rawLimit, Items.MAX_LIMIT);
        ResponseEntity<?> response;
        if (limit < 1) {
            response = ResponseEntity.badRequest().body(new Failure(
                    "parameter limit must be an integer from 1 to " + Items.MAX_LIMIT));
        } else {
            Items.Result result = items.firstItems((int) limit);
            response = ResponseEntity.status(result.status())
                    .contentType(MediaType.APPLICATION_JSON)
                    .body(result.json());
        }
        stats.record(Stats.ITEMS, tag);
        return response;
    }

    /** Seed 1's list: {@code projection=none} (default) reads whole answers, {@code 4} four fields. Counted under /items. */
    @GetMapping("/answers")
    ResponseEntity<?> answers(
            @RequestParam(value = "limit", required = false) String rawLimit,
            @RequestParam(value = "projection", required = false) String projection,
            @RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        long limit = rawLimit == null ? Items.DEFAULT_LIMIT : Primes.parseBounded(rawLimit, Items.MAX_LIMIT);
        ResponseEntity<?> response;
        if (limit < 1) {
            response = ResponseEntity.badRequest().body(new Failure(
                    "parameter limit must be an integer from 1 to " + Items.MAX_LIMIT));
        } else if (projection != null && !projection.equals("none") && !projection.equals("4")) {
            response = ResponseEntity.badRequest().body(new Failure("parameter projection must be none or 4"));
        } else {
            Items.Result result = items.firstAnswers((int) limit, "4".equals(projection) ? Items.FOUR_FIELDS : null);
            response = ResponseEntity.status(result.status())
                    .contentType(MediaType.APPLICATION_JSON)
                    .body(result.json());
        }
        stats.record(Stats.ITEMS, tag);
        return response;
    }

    @GetMapping(value = "/healthz", produces = MediaType.TEXT_PLAIN_VALUE)
    String healthz() {
        return "ok";
    }

    @GetMapping("/stats")
    Map<String, Object> stats() {
        return stats.snapshot();
    }

    /** Everything no other mapping takes (static resources are switched off). */
    @RequestMapping("/**")
    ResponseEntity<Failure> notFound(@RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        stats.record(Stats.OTHER, tag);
        return ResponseEntity.status(404).body(NOT_FOUND);
    }
}
