-- bookByPk
select (select json_build_object('nodeId', translate(encode(convert_to((jsonb_build_array('public'::text, 'book'::text, t1."id"))::text, 'utf-8'), 'base64'), E'\n', ''), 'title', t1."title") from "public"."book" as t1 where t1."id" = $1::"pg_catalog"."int4");

-- reviewByPk
select (select json_build_object('stars', t1."stars") from "public"."review" as t1 where t1."book_id" = $1::"pg_catalog"."int4" and t1."n" = $2::"pg_catalog"."int4");
