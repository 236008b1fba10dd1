# jq builtins that the jaq standard library lacks or defines differently,
# layered over it (later definitions shadow earlier ones).

def have_decnum: false;
def have_literal_numbers: true;

def halt_error($exit_code): halt_error_report, halt($exit_code);
def halt_error: halt_error(5);

def toarray: if type == "array" then . else [.] end;
def leaf_paths: paths(scalars);
def ascii: [.] | implode;
def trimstr($affix): ltrimstr($affix) | rtrimstr($affix);

def date: todate;
def dateadd($unit; $amount): . + $amount;
def datesub($unit; $amount): . - $amount;

# null items join as empty text, numbers and booleans as their JSON text.
def join($separator):
  if length == 0 then ""
  else
    map(if . == null then "" elif type == "boolean" or type == "number" then tojson else . end)
    | reduce .[1:][] as $item ("" + .[0]; . + $separator + $item)
  end;

def IN(source): . as $needle | any(source == $needle; .);
def IN(source; haystack): any(source as $needle | haystack == $needle; .);
def INDEX(rows; key): reduce rows as $row ({}; .[$row | key | tostring] = $row);
def INDEX(key): INDEX(.[]; key);
def JOIN($index; key): [.[] | [., $index[key]]];
def JOIN($index; rows; key): rows | [., $index[key]];
def JOIN($index; rows; key; combine): rows | [., $index[key]] | combine;

def @csv:
  if type != "array" then error("cannot csv-format \(type), only an array")
  else
    map(
      if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
      elif type == "number" or type == "boolean" then tojson
      elif . == null then ""
      else error("\(type) (\(tojson)) is not valid in a csv row")
      end
    )
    | join(",")
  end;

def @tsv:
  if type != "array" then error("cannot tsv-format \(type), only an array")
  else
    map(
      if type == "string" then
        split("\\") | join("\\\\") | split("\t") | join("\\t")
        | split("\n") | join("\\n") | split("\r") | join("\\r")
      elif type == "number" or type == "boolean" then tojson
      elif . == null then ""
      else error("\(type) (\(tojson)) is not valid in a tsv row")
      end
    )
    | join("\t")
  end;

# Streaming form: [path, leaf] for every leaf, and [path] after the last
# child of each non-empty array or object.
def tostream:
  def events($path):
    if (type == "array" or type == "object") and length > 0 then
      [keys_unsorted[]] as $keys
      | ($keys[] as $key | .[$key] | events($path + [$key])),
        [$path + [$keys[-1]]]
    else [$path, .]
    end;
  events([]);

def fromstream(events):
  def place($path; $leaf):
    if $path == [] then $leaf
    else
      $path[0] as $key
      | (if . == null then (if ($key | type) == "number" then [] else {} end) else . end)
      | if ($key | type) == "number" and $key >= length
        then . + [null | place($path[1:]; $leaf)]
        else .[$key] |= place($path[1:]; $leaf)
        end
    end;
  foreach events as $event ({value: null, done: false};
    if .done then {value: null, done: false} end
    | if ($event | length) == 2
      then .value |= place($event[0]; $event[1]) | .done = ($event[0] == [])
      else .done = (($event[0] | length) == 1)
      end;
    if .done then .value else empty end
  );

def truncate_stream(events):
  . as $depth | events | select((.[0] | length) > $depth) | .[0] |= .[$depth:];
