package benchrun.springwebflux;

import benchrun.common.Primes;
import benchrun.common.Stats;

import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The endpoints of stacks/CONTRACT.md as an annotated WebFlux controller. Handlers run on the
 * Reactor Netty event loop that read the request (one loop thread per CPU, at least 4); the
 * trial division of /compute runs there too, as a naive reactive app would do it (no
 * publishOn / boundedElastic offloading). /items waits for MongoDB without blocking a thread.
 * A request is counted once its response is built.
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

    Endpoints(Items items, Backlog backlog) {
        this.items = items;
        // The accept queue it listens with, reported under /stats runtime (see Backlog).
        stats.describe("backlog", backlog.effective());
        stats.describe("backlogSource", backlog.isSet() ? "NETTY_SO_BACKLOG" : "Netty default (somaxconn)");
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
    Mono<ResponseEntity<?>> items(
            @RequestParam(value = "limit", required = false) String rawLimit,
            @RequestHeader(value = Stats.CELL_HEADER, required = false) String tag) {
        long limit = rawLimit == null ? Items.DEFAULT_LIMIT : Primes.parseBounded(rawLimit, Items.MAX_LIMIT);
        if (limit < 1) {
            stats.record(Stats.ITEMS, tag);
            return Mono.just(ResponseEntity.badRequest().body(new Failure(
                    "parameter limit must be an integer from 1 to " + Items.MAX_LIMIT)));
        }
        return items.firstItems((int) limit).map(result -> {
            ResponseEntity<?> response = ResponseEntity.status(result.status())
                    .contentType(MediaType.APPLICATION_JSON)
                    .body(result.json());
            stats.record(Stats.ITEMS, tag);
            return response;
        });
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
