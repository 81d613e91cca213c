package benchrun.springmvc;

import benchrun.common.Json;

import com.mongodb.ConnectionString;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import org.bson.conversions.Bson;
import jakarta.annotation.PreDestroy;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.springframework.stereotype.Component;

/**
 * Reads collection {@code items} through the official synchronous MongoDB driver: one
 * {@link MongoClient} (with its connection pool) for the process, made from MONGODB_URL at start;
 * the database is the one named in the URL's path (default {@code benchrun}).
 */
@Component
class Items {
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    private static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    /** What {@code ?projection=4} keeps: the four fields of the original's fixed query. */
    static final Bson FOUR_FIELDS = Projections.include("_id", "suggestion_id", "user_id", "openid");

    private final MongoClient client;
    private final MongoCollection<Document> collection;
    private final MongoCollection<Document> answers;

    Items() {
        String url = System.getenv("MONGODB_URL");
        if (url == null || url.isBlank()) {
            client = null;
            collection = null;
            answers = null;
        } else {
            ConnectionString cs = new ConnectionString(url);
            String db = cs.getDatabase() != null ? cs.getDatabase() : "benchrun";
            client = MongoClients.create(cs);
            collection = client.getDatabase(db).getCollection("items");
            answers = client.getDatabase(db).getCollection("answers");
        }
    }

    /** The result of one read: an HTTP status and a JSON body. */
    record Result(int status, String json) {}

    Result firstItems(int limit) {
        return first(collection, limit, null, true);
    }

    /**
     * The first {@code limit} questionnaire answers in natural order: whole documents when
     * {@code projection} is null (the original's query of batches 1-20), else only its fields.
     */
    Result firstAnswers(int limit, Bson projection) {
        return first(answers, limit, projection, false);
    }

    private Result first(MongoCollection<Document> from, int limit, Bson projection, boolean sorted) {
        if (from == null) {
            return new Result(503, "{\"error\":\"MONGODB_URL is not set\"}");
        }
        try {
            StringBuilder out = new StringBuilder(limit * 80).append('[');
            boolean first = true;
            // The answers are read in the store's natural order (insertion order, _id 1..L as
            // seeded), as the original's find().limit(100) did: a sort makes FerretDB read and
            // order the whole collection (about 7 s per query at 350m against 0.7 s without).
            var find = (sorted ? from.find().sort(Sorts.ascending("_id")) : from.find()).limit(limit);
            if (projection != null) {
                find = find.projection(projection);
            }
            for (Document doc : find) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(doc.toJson(JSON));
            }
            return new Result(200, out.append(']').toString());
        } catch (MongoTimeoutException | MongoSocketException e) {
            return new Result(503, "{\"error\":\"database unreachable: " + Json.escape(e.getMessage()) + "\"}");
        } catch (MongoException e) {
            return new Result(502, "{\"error\":\"database error: " + Json.escape(e.getMessage()) + "\"}");
        }
    }

    @PreDestroy
    void close() {
        if (client != null) {
            client.close();
        }
    }
}
