// For each opening answer given as JSON on stdin, print whether the page would open from it
// (`checkOpening` accepts it): true or false, one per line.
import { checkOpening } from "../../dashboard/opening.js";
import { answer, requests } from "./requests.js";

for (const opening of requests<unknown>()) answer(checkOpening(opening) !== undefined);
