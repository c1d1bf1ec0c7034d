-- node
select (select json_build_object('nodeId', translate(encode(convert_to((jsonb_build_array('public'::text, 'author'::text, t1."id"))::text, 'utf-8'), 'base64'), E'\n', ''), 'name', t1."name") from "public"."author" as t1 where (t1."id" = $1::"pg_catalog"."int4"));
