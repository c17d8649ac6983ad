package zkcontroller.jvm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark entry point (called through py4j by {@code jvm_parser.py}): one task per planned chunk, each reading
 * its bytes and parsing them with {@link KafkaLineParser}, so the parse never leaves the executor JVMs.
 */
public final class KafkaChunks {
    private KafkaChunks() {
    }

    /** A chunk of the driver's plan ({@code sources.Chunk}): bytes [start, end) of a file, end -1 = to EOF. */
    public static final class Chunk implements Serializable {
        private static final long serialVersionUID = 1L;
        final String path, name, cluster;
        final long start, end, firstLine;

        Chunk(JsonNode c) {
            path = c.get("path").asText();
            name = c.get("name").asText();
            cluster = c.get("cluster").isNull() ? null : c.get("cluster").asText();
            start = c.get("start").asLong();
            end = c.get("end").asLong();
            firstLine = c.get("first_line").asLong();
        }
    }

    /**
     * The staged rows ({@code extract.STAGED}, given as DDL) of the uncompressed Kafka-format chunks.
     *
     * <p>Tasks emit Spark's internal rows (UTF8String, boxed Integer/Long/Boolean, ArrayData) straight into a
     * {@code LogicalRDD}: {@code createDataFrame(JavaRDD<Row>, schema)} would run every external {@link Row}
     * through a {@code RowEncoder} serializer (type checks, conversions, an extra row copy) on top of that.
     * {@code internalCreateDataFrame} is {@code private[sql]} in Scala, public in bytecode.
     */
    public static Dataset<Row> parse(SparkSession spark, String configJson, String chunksJson, String ddl)
            throws IOException {
        new KafkaLineParser(configJson);  // fail on the driver, at once, on a config the parser cannot use
        List<Chunk> chunks = new ArrayList<>();
        for (JsonNode c : new ObjectMapper().readTree(chunksJson)) chunks.add(new Chunk(c));
        StructType schema = StructType.fromDDL(ddl);
        int[] types = internalTypes(schema);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<InternalRow> rows = jsc.parallelize(chunks, Math.max(1, chunks.size()))
                .flatMap(new ParseChunk(configJson, types));
        return ((org.apache.spark.sql.classic.SparkSession) spark).internalCreateDataFrame(rows.rdd(), schema, false);
    }

    static final int STRING = 0, INT = 1, LONG = 2, BOOLEAN = 3, INT_ARRAY = 4;

    /** Per column, how a parser value becomes its internal form; other column types are refused here. */
    static int[] internalTypes(StructType schema) {
        StructField[] fields = schema.fields();
        int[] types = new int[fields.length];
        for (int i = 0; i < fields.length; i++) {
            DataType t = fields[i].dataType();
            if (t instanceof StringType) types[i] = STRING;
            else if (t instanceof IntegerType) types[i] = INT;
            else if (t instanceof LongType) types[i] = LONG;
            else if (t instanceof BooleanType) types[i] = BOOLEAN;
            else if (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof IntegerType) types[i] = INT_ARRAY;
            else throw new IllegalArgumentException("column " + fields[i].name() + ": no internal form for " + t);
        }
        return types;
    }

    /**
     * One parser row (Java String, Integer, Long, Boolean, Integer[] or null per column) as an internal row,
     * in place. A value of another class than its column's fails the task (ClassCastException), as
     * the external Row path's encoder would.
     */
    static InternalRow internal(Object[] row, int[] types) {
        for (int i = 0; i < row.length; i++) {
            Object v = row[i];
            if (v == null) continue;
            switch (types[i]) {
                case STRING -> row[i] = UTF8String.fromString((String) v);
                case INT -> row[i] = (Integer) v;
                case LONG -> row[i] = (Long) v;
                case BOOLEAN -> row[i] = (Boolean) v;
                default -> row[i] = new GenericArrayData((Object[]) (Integer[]) v);
            }
        }
        return new GenericInternalRow(row);
    }

    /** The task body: read the chunk, parse it lazily. */
    static final class ParseChunk implements FlatMapFunction<Chunk, InternalRow> {
        private static final long serialVersionUID = 1L;
        private final String configJson;
        private final int[] types;

        ParseChunk(String configJson, int[] types) {
            this.configJson = configJson;
            this.types = types;
        }

        @Override
        public Iterator<InternalRow> call(Chunk chunk) throws Exception {
            byte[] data = read(chunk);
            Iterator<Object[]> rows = new KafkaLineParser(configJson).rows(data, chunk.cluster, chunk.name,
                    chunk.firstLine);
            return new Iterator<InternalRow>() {
                @Override
                public boolean hasNext() {
                    return rows.hasNext();
                }

                @Override
                public InternalRow next() {
                    return internal(rows.next(), types);
                }
            };
        }
    }

    static byte[] read(Chunk chunk) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(chunk.path, "r")) {
            long end = chunk.end < 0 ? f.length() : chunk.end;
            long size = Math.max(0, end - chunk.start);
            if (size > Integer.MAX_VALUE - 8) throw new IOException(chunk.path + ": chunk larger than 2 GiB");
            byte[] data = new byte[(int) size];
            f.seek(chunk.start);
            f.readFully(data);
            return data;
        }
    }
}
