-- Edge Functions logs (src/functions/function-logs.ts), shared by every node of a cluster: each
-- node appends its invocations and console lines in small batches; GET …/functions/{slug}/logs
-- reads them whichever node served them. Bounded per project (STRATA_FUNCTIONS_LOG_LIMIT).
create table function_logs (
  id bigserial primary key,
  project_ref text not null,
  function_slug text not null,
  entry jsonb not null
);
create index function_logs_project on function_logs (project_ref, id);
