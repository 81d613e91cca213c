package benchrun.springwebflux;

import benchrun.common.Json;

import com.mongodb.ConnectionString;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import jakarta.annotation.PreDestroy;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reads collection {@code items} through the official MongoDB Reactive Streams driver (no thread
 * is blocked while waiting for the database): one {@link MongoClient} for the process, made from
 * MONGODB_URL at start; the database is the one named in the URL's path (default
 * {@code benchrun}).
 */
@Component
class Items {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    private static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private final MongoClient client;
    private final MongoCollection<Document> collection;

    Items() {
        String url = System.getenv("MONGODB_URL");
        if (url == null || url.isBlank()) {
            client = null;
            collection = null;
        } else {
            ConnectionString cs = new ConnectionString(url);
            String db = cs.getDatabase() != null ? cs.getDatabase() : "benchrun";
            client = MongoClients.create(cs);
            collection = client.getDatabase(db).getCollection("items");
        }
    }

    /** The result of one read: an HTTP status and a JSON body. */
    record Result(int status, String json) {}

    Mono<Result> firstItems(int limit) {
        if (collection == null) {
            return Mono.just(new Result(503, "{\"error\":\"MONGODB_URL is not set\"}"));
        }
        // batchSize(limit): without it this driver asks for a batch as large as the subscriber's
        // demand (Integer.MAX_VALUE for collectList), which MongoDB caps by itself but which
        // some MongoDB-compatible servers (FerretDB 1.x) try to allocate up front.
        return Flux.from(collection.find().sort(Sorts.ascending("_id")).limit(limit).batchSize(limit))
                .map(doc -> doc.toJson(JSON))
                .collectList()
                .map(docs -> new Result(200, "[" + String.join(",", docs) + "]"))
                .onErrorResume(MongoTimeoutException.class, e -> Mono.just(unreachable(e)))
                .onErrorResume(MongoSocketException.class, e -> Mono.just(unreachable(e)))
                .onErrorResume(MongoException.class, e -> Mono.just(new Result(502,
                        "{\"error\":\"database error: " + Json.escape(e.getMessage()) + "\"}")));
    }

    private static Result unreachable(MongoException e) {
        return new Result(503, "{\"error\":\"database unreachable: " + Json.escape(e.getMessage()) + "\"}");
    }

    @PreDestroy
    void close() {
        if (client != null) {
            client.close();
        }
    }
}
