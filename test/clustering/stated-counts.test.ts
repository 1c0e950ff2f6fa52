import { describe, expect, it } from 'vitest';
import { callSubjects, statedCounts } from '../../src/clustering/stated-counts.ts';

describe('how many of a call’s subjects a goal asks for (stated-counts)', () => {
  it('a call is about the nouns of its tool’s name and argument names, singular, without verbs and joining words', () => {
    expect(callSubjects('Get_Hotel_Policies', ['hotel_id'])).toEqual(new Set(['hotel', 'policy']));
    expect(callSubjects('Get_Description_And_Info', ['hotelId', 'languagecode'])).toEqual(
      new Set(['description', 'info', 'hotel', 'languagecode']),
    );
    expect(callSubjects('github.listIssues', [])).toEqual(new Set(['github', 'issue']));
  });

  it('a number word or numeral up to two words before a subject is a count the goal states', () => {
    const hotels = callSubjects('Get_Hotel_Policies', ['hotel_id']);
    expect(statedCounts('Find two accessible hotels in Paris and compare the policies of these two hotels.', hotels)).toEqual(new Set([2]));
    expect(statedCounts('Find three pet-friendly hotels close to Times Square', hotels)).toEqual(new Set([3]));
    expect(statedCounts('Find 4 hotels near the Louvre', hotels)).toEqual(new Set([4]));
    expect(statedCounts('Book three 5-star hotels', hotels)).toEqual(new Set([3, 5]));
  });

  it('numbers that count something else, or stand too far from the subject, are not counts of it', () => {
    const hotels = callSubjects('Get_Description_And_Info', ['hotel_id']);
    // rooms and people are not what the call is about
    expect(statedCounts('Our group of five needs three rooms. Could you find two hotels within fifty kilometers?', hotels)).toEqual(
      new Set([2]),
    );
    // dates and times are numbers before other words
    expect(statedCounts('From November 3, 2024 at 9 AM, check the hotel reviews', hotels)).toEqual(new Set());
    expect(statedCounts('two of the cheapest available hotels', hotels)).toEqual(new Set());
    expect(statedCounts('Check the user reviews of all the satisfying hotels', hotels)).toEqual(new Set());
  });
});
