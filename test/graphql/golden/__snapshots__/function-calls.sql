-- doubleIt
select to_json("public"."double_it"("x" => $1::"pg_catalog"."int4"));

-- authorBooksOver
select to_json((with t1_p as (select t1."id" as "id", t1."title" as "title" from "public"."author_books_over"("min_pages" => $1::"pg_catalog"."int4") as t1 where true order by t1."id" asc limit 5) select json_build_object('edges', coalesce((select json_agg(json_build_object('node', json_build_object('title', t1_p."title")) order by t1_p."id" asc) from t1_p), '[]'::json))));
