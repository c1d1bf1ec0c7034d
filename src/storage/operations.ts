/**
 * Every operation name of the Storage service, in one table. The name of the operation a request
 * performs is set as `storage.operation` for its transactions (database/tx.ts `inTx`), where
 * operation-scoped policies read it (`storage.operation()`, `storage.allow_only_operation(...)`),
 * so changing a value changes what those policies see. Keys and values follow the upstream storage
 * server's table where Strata has the same route; the S3 names (and tus, which commits as
 * CREATE_OBJECT) are Strata's own. The Iceberg and vector rows are upstream's, for those routes.
 */
export const OPERATIONS = {
  // Buckets (REST, and the S3 bucket calls that share them)
  CREATE_BUCKET: 'storage.bucket.create',
  DELETE_BUCKET: 'storage.bucket.delete',
  EMPTY_BUCKET: 'storage.bucket.empty',
  LIST_BUCKET: 'storage.bucket.list',
  GET_BUCKET: 'storage.bucket.get',
  UPDATE_BUCKET: 'storage.bucket.update',

  // Objects (REST; resumable uploads commit as CREATE_OBJECT)
  COPY_OBJECT: 'storage.object.copy',
  CREATE_OBJECT: 'storage.object.upload',
  UPDATE_OBJECT: 'storage.object.upload_update',
  UPLOAD_SIGN_OBJECT: 'storage.object.upload_signed',
  DELETE_OBJECT: 'storage.object.delete',
  DELETE_OBJECTS: 'storage.object.delete_many',
  GET_PUBLIC_OBJECT: 'storage.object.get_public',
  GET_AUTH_OBJECT: 'storage.object.get_authenticated',
  INFO_AUTH_OBJECT: 'storage.object.info_authenticated',
  INFO_PUBLIC_OBJECT: 'storage.object.info_public',
  /** `/object/info/{bucket}/{path}` without a scope: upstream's legacy name, without the prefix. */
  GET_AUTH_OBJECT_INFO: 'object.get_authenticated_info',
  GET_SIGNED_OBJECT: 'storage.object.get_signed',
  SIGN_UPLOAD_URL: 'storage.object.sign_upload_url',
  SIGN_OBJECT_URL: 'storage.object.sign',
  SIGN_OBJECT_URLS: 'storage.object.sign_many',
  LIST_OBJECTS: 'storage.object.list',
  LIST_OBJECTS_V2: 'storage.object.list_v2',
  MOVE_OBJECT: 'storage.object.move',

  // Image transformation
  RENDER_AUTH_IMAGE: 'storage.render.image_authenticated',
  RENDER_PUBLIC_IMAGE: 'storage.render.image_public',
  RENDER_SIGNED_IMAGE: 'storage.render.image_signed',

  // S3 protocol (the calls not listed here use the REST names above)
  S3_UPLOAD: 'storage.s3.put_object',
  S3_POST_OBJECT: 'storage.s3.post_object',
  S3_GET_OBJECT: 'storage.s3.get_object',
  S3_GET_OBJECT_TAGGING: 'storage.s3.get_object_tagging',
  S3_LIST_OBJECT: 'storage.s3.list_objects',
  S3_CREATE_MULTIPART: 'storage.s3.create_multipart_upload',
  S3_UPLOAD_PART: 'storage.s3.upload_part',
  S3_UPLOAD_PART_COPY: 'storage.s3.upload_part_copy',
  S3_COMPLETE_MULTIPART: 'storage.s3.complete_multipart_upload',
  S3_ABORT_MULTIPART: 'storage.s3.abort_multipart_upload',
  S3_LIST_PARTS: 'storage.s3.list_parts',
  S3_LIST_MULTIPART: 'storage.s3.list_multipart_uploads',

  // Analytics buckets and their Iceberg REST catalog (upstream's names)
  ICEBERG_GET_CONFIG: 'storage.iceberg.config.get',
  ICEBERG_CREATE_NAMESPACE: 'storage.iceberg.namespace.create',
  ICEBERG_DROP_NAMESPACE: 'storage.iceberg.namespace.drop',
  ICEBERG_LIST_NAMESPACES: 'storage.iceberg.namespace.list',
  ICEBERG_LOAD_NAMESPACE: 'storage.iceberg.namespace.load',
  ICEBERG_NAMESPACE_EXISTS: 'storage.iceberg.namespace.exists',
  ICEBERG_LIST_TABLES: 'storage.iceberg.table.list',
  ICEBERG_LOAD_TABLE: 'storage.iceberg.table.load',
  ICEBERG_TABLE_EXISTS: 'storage.iceberg.table.exists',
  ICEBERG_CREATE_TABLE: 'storage.iceberg.table.create',
  ICEBERG_DROP_TABLE: 'storage.iceberg.table.drop',
  ICEBERG_COMMIT_TABLE: 'storage.iceberg.table.commit',

  // Vector buckets (upstream's names)
  CREATE_VECTOR_BUCKET: 'storage.vector.bucket.create',
  DELETE_VECTOR_BUCKET: 'storage.vector.bucket.delete',
  LIST_VECTOR_BUCKETS: 'storage.vector.bucket.list',
  GET_VECTOR_BUCKET: 'storage.vector.bucket.get',
  CREATE_VECTOR_INDEX: 'storage.vector.index.create',
  DELETE_VECTOR_INDEX: 'storage.vector.index.delete',
  LIST_VECTOR_INDEXES: 'storage.vector.index.list',
  GET_VECTOR_INDEX: 'storage.vector.index.get',
  GET_VECTORS: 'storage.vector.vectors.get',
  PUT_VECTORS: 'storage.vector.vectors.put',
  LIST_VECTORS: 'storage.vector.vectors.list',
  QUERY_VECTORS: 'storage.vector.vectors.query',
  DELETE_VECTORS: 'storage.vector.vectors.delete',

  // Background work (reconcile.ts), not a route
  RECONCILE: 'storage.reconcile',
} as const;

export type Operation = (typeof OPERATIONS)[keyof typeof OPERATIONS];
