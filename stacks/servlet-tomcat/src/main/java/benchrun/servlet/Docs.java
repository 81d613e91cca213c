package benchrun.servlet;

import benchrun.common.Json;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Reads {@code GET $COUCHDB_URL/$COUCHDB_DB/{id}} from a CouchDB-API server with one shared
 * {@link HttpClient} (HTTP/1.1, keep-alive connection pool), blocking the calling thread.
 * A user and password in the URL ({@code http://user:pw@host:5984}) are sent as Basic auth.
 * A found document is parsed into a Jackson tree and written out again, as the original's
 * CouchDB4J driver parsed it into a JSON object the servlet then printed.
 */
final class Docs {
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /** An HTTP status and the body to answer with. */
    record Result(int status, byte[] body) {
        static Result error(int status, String message) {
            return new Result(status, ("{\"error\":\"" + Json.escape(message) + "\"}").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base; // e.g. http://10.96.0.13:5984/docs/ , or null when unset
    private final String authorization;
    private final HttpClient client;

    Docs(String couchUrl, String db) {
        if (couchUrl == null || couchUrl.isBlank()) {
            base = null;
            authorization = null;
            client = null;
            return;
        }
        URI uri = URI.create(couchUrl.trim());
        String userInfo = uri.getRawUserInfo();
        authorization = userInfo == null ? null : "Basic " + Base64.getEncoder().encodeToString(
                URLDecoder.decode(userInfo, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8));
        String withoutUser = uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "")
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
        base = withoutUser.replaceAll("/+$", "") + "/" + encode(db == null || db.isBlank() ? "docs" : db) + "/";
        client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .build();
    }

    String describe() {
        return base == null ? "COUCHDB_URL unset" : base;
    }

    Result get(String id) {
        if (client == null) {
            return Result.error(503, "COUCHDB_URL is not set");
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + encode(id)))
                .timeout(REQUEST_TIMEOUT)
                .header("Accept", "application/json")
                .GET();
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        try {
            HttpResponse<byte[]> response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            int status = response.statusCode();
            if (status == 200) {
                return new Result(200, reserialize(response.body()));
            }
            if (status == 404) {
                return new Result(status, response.body());
            }
            return Result.error(502, "CouchDB answered " + status);
        } catch (JsonProcessingException e) {
            return Result.error(502, "CouchDB answered a document that is not JSON: " + e.getOriginalMessage());
        } catch (HttpTimeoutException e) {
            return Result.error(502, "CouchDB at " + base + ": " + e.getMessage());
        } catch (IOException e) {
            return Result.error(502, "CouchDB at " + base + " unreachable: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Result.error(503, "interrupted");
        }
    }

    /** The document parsed into a tree and serialized again (the per-request work of the original). */
    static byte[] reserialize(byte[] stored) throws IOException {
        JsonNode doc = JSON.readTree(stored);
        return JSON.writeValueAsBytes(doc);
    }

    /** Percent-encodes everything but RFC 3986 unreserved characters (a path segment). */
    static String encode(String segment) {
        StringBuilder out = new StringBuilder(segment.length() + 8);
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return out.toString();
    }
}
