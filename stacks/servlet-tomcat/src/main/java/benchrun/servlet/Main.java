package benchrun.servlet;

import benchrun.common.Stats;

import java.io.File;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * The benchrun "servlet-tomcat" system under test: one Jakarta servlet on embedded Tomcat, no
 * framework. Tomcat's defaults: HTTP/1.1 NIO connector, request pool of max 200 threads.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        int port = parsePort(System.getenv("PORT"));
        Stats stats = new Stats();
        Docs docs = new Docs(System.getenv("COUCHDB_URL"), System.getenv("COUCHDB_DB"));

        Tomcat tomcat = new Tomcat();
        // Tomcat's work directory: under java.io.tmpdir, not the (maybe read-only) working dir.
        File base = Files.createTempDirectory("tomcat." + port + ".").toFile();
        base.deleteOnExit();
        tomcat.setBaseDir(base.getAbsolutePath());
        Connector connector = new Connector("HTTP/1.1");
        connector.setPort(port);
        connector.setProperty("address", "0.0.0.0");
        tomcat.setConnector(connector);

        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "benchrun", new AppServlet(stats, docs));
        context.addServletMappingDecoded("/", "benchrun");

        tomcat.start();
        if (connector.getProtocolHandler() instanceof org.apache.coyote.AbstractProtocol<?> protocol) {
            // Tomcat's defaults, reported under /stats runtime.
            stats.describe("maxThreads", protocol.getMaxThreads());
            stats.describe("acceptCount", protocol.getAcceptCount());
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                // exiting anyway
            }
        }, "shutdown"));
        System.out.println("servlet-tomcat (Tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber()
                + ") listening on http://0.0.0.0:" + port + ", CouchDB: " + docs.describe());
        tomcat.getServer().await();
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
